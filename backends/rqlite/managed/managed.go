// Package managed opens the rqlite backend on a cluster it starts itself:
// rqlite+process:?nodes=3 runs rqlited processes on loopback,
// rqlite+container:?nodes=3 runs containers on a Docker network of the run's
// own. Opening one starts the cluster and waits for a leader; Close stops
// it and removes everything it started. The store exposes the cluster
// (Store.Cluster), so that fault injection can find it by type assertion.
package managed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/internal/logdir"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/model"
)

// Kinds of managed cluster, and their URL schemes.
const (
	Process   = "process"
	Container = "container"

	ProcessScheme   = "rqlite+process"
	ContainerScheme = "rqlite+container"
)

// Options say which cluster to start and how the store reads.
type Options struct {
	Kind  string // Process or Container
	Nodes int    // 0 means 3
	Level rqlite.Level
	// Guard ties commits' side-writes to their CAS; "" means the seed's.
	Guard rqlite.Guard
	// Rqlited is the rqlited binary (processes; and for containers, the
	// static binary a throwaway image is built from); "" means $RQLITED or
	// PATH.
	Rqlited string
	// Image is the container image; "" means cluster.DefaultImage, and
	// cluster.BuildImage builds a throwaway FROM-scratch image from
	// Rqlited.
	Image string
	// Flags are passed to every rqlited (flags=-raft-snap=50,-raft-snap-int=1s).
	Flags []string
	// Data says where processes keep their data: DataMemory (a tmpfs; see
	// package tmpfs), DataDisk (the system's temporary folder), or
	// "": in memory when the machine has a tmpfs with room, else on disk.
	Data string
}

// Where processes keep their data (data=).
const (
	DataMemory = "memory"
	DataDisk   = "disk"
)

// Parse reads the part of a managed URL after the scheme's colon:
// ?nodes=N&level=L&guard=G&rqlited=PATH&image=IMAGE&flags=F,F…&data=D (image
// for containers only, data for processes only; flags are rqlited flags,
// -name=value, comma-separated).
func Parse(kind, rest string) (Options, error) {
	o := Options{Kind: kind, Nodes: 3, Level: rqlite.LevelStrong}
	scheme := "rqlite+" + kind
	query, ok := cutQuery(rest)
	if !ok {
		return o, fmt.Errorf("%s: want %s:?nodes=N[&level=L…], got %q", scheme, scheme, rest)
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return o, fmt.Errorf("%s: bad parameters: %w", scheme, err)
	}
	for k, v := range values {
		if len(v) != 1 {
			return o, fmt.Errorf("%s: parameter %q repeated", scheme, k)
		}
		switch {
		case k == "nodes":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > 9 {
				return o, fmt.Errorf("%s: nodes must be 1..9, got %q", scheme, v[0])
			}
			o.Nodes = n
		case k == "level":
			if o.Level, err = rqlite.ParseLevel(v[0]); err != nil {
				return o, fmt.Errorf("%s: %w", scheme, err)
			}
		case k == "guard":
			if o.Guard, err = rqlite.ParseGuard(v[0]); err != nil {
				return o, fmt.Errorf("%s: %w", scheme, err)
			}
		case k == "rqlited":
			o.Rqlited = v[0]
		case k == "image" && kind == Container:
			o.Image = v[0]
		case k == "data" && kind == Process:
			if v[0] != DataMemory && v[0] != DataDisk {
				return o, fmt.Errorf("%s: data must be %s or %s, got %q", scheme, DataMemory, DataDisk, v[0])
			}
			o.Data = v[0]
		case k == "flags":
			for _, f := range strings.Split(v[0], ",") {
				if err := cluster.CheckServerFlag(f); err != nil {
					return o, fmt.Errorf("%s: %w", scheme, err)
				}
				o.Flags = append(o.Flags, f)
			}
		default:
			return o, fmt.Errorf("%s: unknown parameter %q", scheme, k)
		}
	}
	return o, nil
}

// Cores is how many cores a run on a managed cluster keeps busy: half a
// core per node, at least one. Fault runs on three rqlited processes kept
// 1.48 and 1.57 busy (leader-kill, follower-stall; leader-stall, which
// mostly waits, 0.78), and two of them side by side on two cores lost a
// detection one alone made (docs/PERFORMANCE.md). A URL that does not
// parse counts as the default three nodes.
func Cores(kind, rest string) float64 {
	o, err := Parse(kind, rest)
	if err != nil {
		o.Nodes = 3
	}
	return max(1, float64(o.Nodes)/2)
}

// cutQuery accepts "" and "?query".
func cutQuery(rest string) (string, bool) {
	if rest == "" {
		return "", true
	}
	if rest[0] != '?' {
		return "", false
	}
	return rest[1:], true
}

// Store is the rqlite store over a cluster it owns.
type Store struct {
	*rqlite.Store
	cl      cluster.Cluster
	cfg     model.Config
	servers []string

	once     sync.Once
	closeErr error
}

// Open starts the cluster opt describes and opens the store on it, its
// leader first among the nodes it talks to. On error nothing is left
// running.
func Open(ctx context.Context, opt Options, cfg model.Config) (*Store, error) {
	cl, data, err := startCluster(ctx, opt)
	if err != nil {
		return nil, err
	}
	addrs := nodeAddrs(ctx, cl)
	s, err := rqlite.Open(ctx, rqlite.Options{Nodes: addrs, Level: opt.Level, Guard: opt.Guard}, cfg)
	if err != nil {
		return nil, errors.Join(err, cl.Close())
	}
	return &Store{Store: s, cl: cl, cfg: cfg, servers: describe(ctx, cl, opt, data)}, nil
}

// describe says which servers the store runs on, for the report: the
// rqlited build the nodes report, how many, of which kind, the flags
// passed to them, and where their data is.
func describe(ctx context.Context, cl cluster.Cluster, opt Options, data string) []string {
	build := "rqlited (version not reported)"
	for _, n := range cl.Nodes() {
		if st, err := cluster.GetStatus(ctx, n.HTTPAddr); err == nil && st.Version != "" {
			build = "rqlited " + st.Version
			if st.Commit != "" && st.Commit != "unknown" {
				build += " (" + st.Commit + ")"
			}
			break
		}
	}
	d := fmt.Sprintf("%s, %d %s nodes", build, len(cl.Nodes()), cl.Kind())
	if len(opt.Flags) > 0 {
		d += ", flags " + strings.Join(opt.Flags, " ")
	}
	if data != "" {
		d += ", " + data
	}
	return []string{d}
}

// Servers says which servers the store runs on.
func (s *Store) Servers() []string { return s.servers }

// startCluster starts the cluster; process nodes write their logs into the
// folder ctx carries (backends.WithLogDir), where they outlive a failed
// start. Containers' logs stay with Docker; a failed start quotes their
// last lines.
func startCluster(ctx context.Context, opt Options) (cluster.Cluster, string, error) {
	ccfg := cluster.Config{Nodes: opt.Nodes, LogDir: logdir.From(ctx), ServerFlags: opt.Flags}
	switch opt.Kind {
	case Process:
		bin, err := cluster.FindRqlited(opt.Rqlited)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", ProcessScheme, err)
		}
		in, data, err := dataFolder(opt.Data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: data=%s: %w", ProcessScheme, opt.Data, err)
		}
		ccfg.DataIn = in
		cl, err := cluster.StartProcesses(ctx, bin, ccfg)
		if err != nil {
			return nil, "", fmt.Errorf("%s: start %d rqlited processes: %w", ProcessScheme, ccfg.Nodes, err)
		}
		return cl, data, nil
	case Container:
		cl, err := cluster.StartContainers(ctx, cluster.ContainerConfig{Config: ccfg, Image: opt.Image, Rqlited: opt.Rqlited})
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", ContainerScheme, err)
		}
		return cl, "", nil
	}
	return nil, "", fmt.Errorf("unknown cluster kind %q", opt.Kind)
}

// dataFolder is the folder processes keep their data in ("" is the
// system's temporary folder) and how the report says so. rqlited syncs
// its Raft log on every commit, and most of a conformance run with the
// data on disk is waiting for the disk (and for other runs' use of it):
// noise in what a run measures, not part of the store. So the data is in
// memory when the machine allows (package tmpfs says why that is safe).
func dataFolder(data string) (string, string, error) {
	if data == DataDisk {
		return "", "data on disk", nil
	}
	in, err := tmpfs.Folder()
	switch {
	case err == nil:
		return in, "data in memory (" + in + ", a tmpfs)", nil
	case data == DataMemory:
		return "", "", err
	}
	return "", "data on disk (" + err.Error() + ")", nil
}

// nodeAddrs lists the nodes' HTTP addresses, the leader's first, so that
// writes need no forwarding while it leads.
func nodeAddrs(ctx context.Context, cl cluster.Cluster) []string {
	var addrs []string
	leader, err := cluster.Leader(ctx, cl)
	if err == nil {
		addrs = append(addrs, leader.HTTPAddr)
	}
	for _, n := range cl.Nodes() {
		if err != nil || n.ID != leader.ID {
			addrs = append(addrs, n.HTTPAddr)
		}
	}
	return addrs
}

// Cluster returns the cluster the store runs on, for fault injection.
func (s *Store) Cluster() cluster.Cluster { return s.cl }

// NodeView returns a store that talks to one node only and reads at
// level, over the tables this store created: what that node answers, with
// no failover to another. Close it when done; it does not own the cluster.
func (s *Store) NodeView(id string, level rqlite.Level) (*rqlite.Store, error) {
	return s.view(id, rqlite.Options{Level: level})
}

// ForwardingView returns a store whose every call goes to node id alone,
// at this store's read level and guard, carrying rqlite's timeout= of
// serverTimeout: the client of an application that talks to one follower,
// which forwards its writes (and strong reads) to the leader and gives up
// on the leader after serverTimeout. Close it when done.
func (s *Store) ForwardingView(id string, serverTimeout time.Duration) (*rqlite.Store, error) {
	v, err := s.view(id, rqlite.Options{Level: s.Level(), ServerTimeout: serverTimeout})
	if err != nil {
		return nil, err
	}
	v.SetGuard(s.Guard())
	return v, nil
}

// view returns a store over node id alone, with opt's level and timeouts.
func (s *Store) view(id string, opt rqlite.Options) (*rqlite.Store, error) {
	for _, n := range s.cl.Nodes() {
		if n.ID == id {
			opt.Nodes = []string{n.HTTPAddr}
			c, err := rqlite.NewClient(opt)
			if err != nil {
				return nil, err
			}
			return rqlite.Attach(c, opt.Level, s.cfg), nil
		}
	}
	return nil, fmt.Errorf("%w %q", cluster.ErrUnknownNode, id)
}

// Close closes the store and removes the cluster. It is safe to call more
// than once.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.closeErr = errors.Join(s.Store.Close(), s.cl.Close())
	})
	return s.closeErr
}

// OpenProcessURL opens rqlite+process:REST.
func OpenProcessURL(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
	opt, err := Parse(Process, rest)
	if err != nil {
		return nil, err
	}
	return asStore(Open(ctx, opt, cfg))
}

// asStore returns a nil interface, not a nil *Store in one, on error.
func asStore(s *Store, err error) (model.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// OpenContainerURL opens rqlite+container:REST.
func OpenContainerURL(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
	opt, err := Parse(Container, rest)
	if err != nil {
		return nil, err
	}
	return asStore(Open(ctx, opt, cfg))
}
