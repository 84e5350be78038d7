package backends

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/adapter"
	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/lagsim"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/mutants"
	"github.com/storecheck/storecheck/backends/rqlite/managed"
	"github.com/storecheck/storecheck/backends/runmutants"
	"github.com/storecheck/storecheck/backends/runsqlite"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/model/runstore"
)

// A Capability is something a target offers beyond its contract's
// operations. Scenarios say which they need (scenarios.Scenario.Needs);
// whether one applies to a backend, and the NOT RUN reason when it does
// not, follow from the target's capabilities alone.
type Capability string

// The capabilities. Their text is what a NOT RUN reason says is missing.
const (
	// ExecutionStore: the execution-store contract (model.Store), opened
	// with Target.Open.
	ExecutionStore Capability = "an execution store"
	// RunStore: the run-store contract, opened with Target.OpenRuns.
	RunStore Capability = "a run store"
	// SharedFile: the store lives in a database file that worker processes
	// of this binary can open too (Target.File), so that a process can be
	// killed or stopped while the others go on.
	SharedFile Capability = "a database file several processes can open"
	// CommitHooks: a worker process can open the file with sqlstore's
	// hooks, busy timeout and synchronous setting (OpenFile).
	CommitHooks Capability = "a SQL store whose commits a worker process can hold at their hook (sqlite:FILE or libsql:FILE)"
	// Replicas: clients read from replicas of a primary (Target.Replicas).
	Replicas Capability = "replicas of a primary (lagsim: or libsql+replica:)"
	// ServerCluster: a cluster of servers the run starts and can break
	// (kill, stop, isolate nodes).
	ServerCluster Capability = "a server cluster the run starts and can break (rqlite+process: or rqlite+container:)"
	// Adapter: a store in another process, behind the adapter protocol.
	Adapter Capability = "a store behind the adapter protocol"
	// InMemory: the data lives in one process's memory and dies with it.
	InMemory Capability = "data in one process's memory"
)

// Target is a backend URL resolved once: what it names and what it can do.
// No package outside backends reads a backend URL; they ask its Target.
type Target struct {
	// URL is the URL as given; show it only through reports.Redact.
	URL string
	// Scheme is its scheme, without the colon.
	Scheme string
	// Kind is the contract its stores keep.
	Kind Kind
	// Caps are its capabilities.
	Caps []Capability
	// File is the database file, with SharedFile.
	File string
	// Fresh says every store opened on the URL starts from nothing of its
	// own and leaves nothing behind (Scheme.Fresh): runs on it share no
	// state.
	Fresh bool
	// Cores is how many cores a run on the URL keeps busy, measured
	// (docs/PERFORMANCE.md): one for a store in storecheck's process or
	// one server; more for a cluster the run starts.
	Cores float64
	// InProcess says its stores run in storecheck's processes, with no
	// server of their own (Scheme.InProcess): the runner may let timed runs
	// on such URLs share fewer cores than they keep busy.
	InProcess bool

	scheme Scheme
	rest   string
}

// Resolve checks rawURL and returns its target, without opening anything.
func Resolve(rawURL string) (*Target, error) {
	s, rest, err := lookup(rawURL)
	if err != nil {
		return nil, err
	}
	if s.Validate != nil {
		if err := s.Validate(rest); err != nil {
			return nil, err
		}
	}
	t := &Target{URL: rawURL, Scheme: s.Name, Kind: s.Kind, Fresh: s.Fresh, InProcess: s.InProcess, scheme: s, rest: rest}
	t.Caps, t.File = capabilities(s.Name, rest)
	t.Cores = 1
	if s.Cores != nil {
		t.Cores = s.Cores(rest)
	}
	if s.Kind == KindRuns {
		t.Caps = append([]Capability{RunStore}, t.Caps...)
	} else {
		t.Caps = append([]Capability{ExecutionStore}, t.Caps...)
	}
	return t, nil
}

// Has reports whether the target offers c.
func (t *Target) Has(c Capability) bool { return slices.Contains(t.Caps, c) }

// Lacks returns the capabilities of needs the target does not offer, and
// the reason it cannot run what needs them, in words ("" when it can).
func (t *Target) Lacks(needs []Capability) ([]Capability, string) {
	var missing []Capability
	for _, c := range needs {
		if !t.Has(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil, ""
	}
	words := make([]string, len(missing))
	for i, c := range missing {
		words[i] = string(c)
	}
	return missing, fmt.Sprintf("it needs %s; %s: offers none", strings.Join(words, " and "), t.Scheme)
}

// capabilities are what a scheme's URL offers beyond its contract.
func capabilities(scheme, rest string) ([]Capability, string) {
	path, query, _ := strings.Cut(rest, "?")
	fileParam := func() string {
		v, err := url.ParseQuery(query)
		if err != nil {
			return ""
		}
		return v.Get("path")
	}
	switch scheme {
	case "memory", "runs+memory":
		return []Capability{InMemory}, ""
	case "sqlite", "libsql":
		if path == dbfile.Memory {
			return []Capability{InMemory}, ""
		}
		return []Capability{SharedFile, CommitHooks}, path
	case "runs+sqlite":
		if path == dbfile.Memory {
			return []Capability{InMemory}, ""
		}
		return []Capability{SharedFile}, path
	case mutants.Scheme, runmutants.Scheme:
		if p := fileParam(); p != "" {
			return []Capability{SharedFile}, p
		}
	case lagsim.Scheme, libsql.ReplicaScheme:
		return []Capability{Replicas}, ""
	case managed.ProcessScheme, managed.ContainerScheme:
		return []Capability{ServerCluster}, ""
	case adapter.Scheme:
		return []Capability{Adapter}, ""
	}
	return nil, ""
}

// Open opens a fresh store of the target's execution-store contract.
func (t *Target) Open(ctx context.Context, cfg model.Config) (model.Store, error) {
	if t.scheme.Open == nil {
		return nil, fmt.Errorf("backend %s: is a %s store, not an execution store", t.Scheme+":", t.Kind)
	}
	return t.scheme.Open(ctx, t.rest, cfg)
}

// OpenRuns opens the target's run store.
func (t *Target) OpenRuns(ctx context.Context) (runstore.Store, error) {
	if t.scheme.OpenRuns == nil {
		return nil, fmt.Errorf("backend %s: is an %s store, not a run store (run-store URLs: runs+memory:, runs+sqlite:PATH, runs+mutant:NAME)", t.Scheme+":", t.Kind)
	}
	return t.scheme.OpenRuns(ctx, t.rest)
}

// FileOptions are what a worker process opens a SQL store's file with
// (the CommitHooks capability).
type FileOptions struct {
	// Hooks are sqlstore's hooks.
	Hooks sqlstore.Hooks
	// Busy is the busy timeout; 0 keeps the backend's (10 s).
	Busy time.Duration
	// Synchronous is PRAGMA synchronous; "" keeps the backend's (NORMAL).
	Synchronous string
}

// Synchronous is the PRAGMA synchronous a sqlite: or libsql: URL asks for
// (synchronous=), or a mutant reports, in upper case; "" when it names
// none (the default, NORMAL) or is another kind.
func (t *Target) Synchronous() string {
	switch t.Scheme {
	case mutants.Scheme:
		return mutants.Synchronous(t.rest)
	case runmutants.Scheme:
		return runmutants.Synchronous(t.rest)
	}
	if t.Scheme != sqlite.Name && t.Scheme != libsql.Name && t.Scheme != runsqlite.Name {
		return ""
	}
	f, err := dbfile.ParseFile(t.Scheme, t.rest)
	if err != nil {
		return ""
	}
	return f.Synchronous
}

// OpenFile opens the target's file with opt, for a target with the
// CommitHooks capability; any other target is opened as Open does and
// hooked is false.
func (t *Target) OpenFile(ctx context.Context, opt FileOptions) (store model.Store, hooked bool, err error) {
	if !t.Has(CommitHooks) {
		st, err := t.Open(ctx, model.DefaultConfig())
		return st, false, err
	}
	if opt.Synchronous == "" {
		opt.Synchronous = t.Synchronous()
	}
	so := sqlstore.Options{Hooks: opt.Hooks}
	var s *sqlstore.Store
	switch t.Scheme {
	case sqlite.Name:
		o := []sqlite.Option{sqlite.WithStoreOptions(so)}
		if opt.Busy > 0 {
			o = append(o, sqlite.WithBusyTimeout(opt.Busy))
		}
		if opt.Synchronous != "" {
			o = append(o, sqlite.WithSynchronous(opt.Synchronous))
		}
		s, err = sqlite.Open(ctx, t.File, model.DefaultConfig(), o...)
	case libsql.Name:
		o := []libsql.Option{libsql.WithStoreOptions(so)}
		if opt.Busy > 0 {
			o = append(o, libsql.WithBusyTimeout(opt.Busy))
		}
		if opt.Synchronous != "" {
			o = append(o, libsql.WithSynchronous(opt.Synchronous))
		}
		s, err = libsql.Open(ctx, t.File, model.DefaultConfig(), o...)
	default:
		return nil, false, fmt.Errorf("backend %s: commit hooks are for sqlite: and libsql: files", t.Scheme)
	}
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}
