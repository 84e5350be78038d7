// Package cluster starts real rqlite clusters for a run and tears them down:
// N rqlited processes on loopback ports (Processes), or N containers on a
// Docker network the run creates (Containers). Both implement Cluster, so
// every scenario and fault runs on either; abilities a kind of cluster may
// lack (isolation needs iptables) say so through Available methods rather
// than failing mid-run.
//
// The package lives beside the rqlite backend, not at the top level,
// because everything in it is rqlite's: its flags, its /status, /nodes,
// /readyz and /leader endpoints. The chaos package drives a Cluster through
// an interface of its own and knows nothing of rqlite.
//
// # Cleanup
//
// Whatever a cluster starts it records before starting it, and Close undoes
// all of it in reverse: processes are killed and reaped, data folders
// removed, iptables rules and the chain that holds them deleted,
// containers, the network and any image the run built removed. Close runs
// with its own bounded context, so it works after the run's context was
// cancelled (Ctrl-C); a failed start closes what it had started before
// returning the error. Processes also get PR_SET_PDEATHSIG, so that they die
// with the harness if it is killed outright.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Node is one member of a cluster as the harness reaches it.
type Node struct {
	// ID is the node id ("n1", "n2", …).
	ID string
	// HTTPAddr is host:port of its HTTP API, reachable from the harness.
	HTTPAddr string
	// RaftAddr is the Raft address the other nodes know it by.
	RaftAddr string
}

// Cluster is a running rqlite cluster that this run started and owns.
type Cluster interface {
	// Kind is "process" or "container".
	Kind() string
	// Nodes lists the members, in id order.
	Nodes() []Node
	// Kill ends a node at once (SIGKILL, docker kill), keeping its data.
	Kill(ctx context.Context, id string) error
	// Stop ends a node gracefully (SIGTERM, docker stop), keeping its data.
	Stop(ctx context.Context, id string) error
	// Start starts a killed or stopped node again on its data.
	Start(ctx context.Context, id string) error
	// Pause freezes a node (SIGSTOP, docker pause); Resume thaws it.
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
	// Isolate cuts a node off from every other node (clients still reach
	// its HTTP API where the kind of cluster allows); Rejoin undoes it.
	Isolate(ctx context.Context, id string) error
	Rejoin(ctx context.Context, id string) error
	// IsolationAvailable says why Isolate cannot work here, or nil.
	IsolationAvailable() error
	// SaveLogs writes each node's server log so far into dir, as ID.log.
	SaveLogs(ctx context.Context, dir string) error
	// Close removes everything the cluster started.
	Close() error
}

// ErrUnknownNode is returned for a node id the cluster does not have.
var ErrUnknownNode = errors.New("unknown node")

// nodeIDs names the nodes of an n-node cluster.
func nodeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i+1)
	}
	return ids
}

// Config is what both kinds of cluster are started with.
type Config struct {
	// Nodes is the cluster size; 0 means 3.
	Nodes int
	// LogDir receives one log file per node, and keeps it after Close (a
	// run's evidence folder, logs/: a cluster that failed to start leaves
	// its account there); "" means a folder inside the cluster's own
	// temporary folder, removed on Close.
	LogDir string
	// ReadyTimeout bounds the wait for a leader after start; 0 means 60s.
	ReadyTimeout time.Duration
	// DataIn is the folder the cluster's own temporary folder (the nodes'
	// data, and their logs when LogDir is "") is made in; "" means the
	// system's temporary folder. Processes only: a container keeps its data
	// in its own file system.
	DataIn string
	// ServerFlags are passed to every rqlited after the flags the cluster
	// sets itself (e.g. "-raft-snap=50", which makes a returning node take
	// the snapshot path); see CheckServerFlag.
	ServerFlags []string
}

// ownFlags are the rqlited flags the cluster sets itself: a server flag
// may not override them (the cluster would lose track of its nodes).
var ownFlags = []string{"node-id", "http-addr", "http-adv-addr", "raft-addr", "raft-adv-addr", "bootstrap-expect", "join"}

// CheckServerFlag says why flag cannot be passed to rqlited, or nil: it
// must be one -name=value (so that nothing becomes a positional argument,
// such as the data folder) and not one the cluster sets itself.
func CheckServerFlag(flag string) error {
	name, value, ok := strings.Cut(strings.TrimLeft(flag, "-"), "=")
	if !strings.HasPrefix(flag, "-") || !ok || name == "" || value == "" {
		return fmt.Errorf("server flag %q: want -name=value", flag)
	}
	if slices.Contains(ownFlags, name) {
		return fmt.Errorf("server flag %q: storecheck sets -%s itself", flag, name)
	}
	return nil
}

func (c Config) normalize() (Config, error) {
	if c.Nodes == 0 {
		c.Nodes = 3
	}
	if c.Nodes < 1 || c.Nodes > 9 {
		return c, fmt.Errorf("cluster size must be 1..9, got %d", c.Nodes)
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	for _, f := range c.ServerFlags {
		if err := CheckServerFlag(f); err != nil {
			return c, err
		}
	}
	return c, nil
}

// cleanupTimeout bounds Close.
const cleanupTimeout = 60 * time.Second
