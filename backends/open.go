// Package backends opens an execution store from a URL such as
// "sqlite:/tmp/x.db". Each scheme is one entry of the table Schemes returns;
// adding a backend (mutant:, rqlite:, exec:) means adding an entry.
package backends

import (
	"context"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/backends/adapter"
	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/logdir"
	"github.com/storecheck/storecheck/backends/lagsim"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/mutants"
	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/managed"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/model/runstore"
)

// Scheme is one kind of backend URL.
type Scheme struct {
	// Name is the scheme without its colon, e.g. "sqlite".
	Name string
	// Example is a URL of this scheme.
	Example string
	// Description says in one sentence what the backend is.
	Description string
	// Validate rejects a malformed rest of the URL without opening anything,
	// so bad input fails before a run starts; nil accepts any rest.
	Validate func(rest string) error
	// Open opens the store for the part of the URL after "Name:".
	Open func(ctx context.Context, rest string, cfg model.Config) (model.Store, error)
	// Kind is the contract the scheme's stores keep; the zero value is the
	// execution store. A KindRuns scheme has OpenRuns instead of Open (see
	// runs.go).
	Kind Kind
	// OpenRuns opens the run store for the part of the URL after "Name:".
	OpenRuns func(ctx context.Context, rest string) (runstore.Store, error)
	// Fresh says every Open starts from nothing the URL names — memory of
	// its own, servers it starts on ports and folders it picks — and Close
	// leaves nothing behind: runs of one such URL share no state and may go
	// side by side (Target.Fresh).
	Fresh bool
	// Cores says how many cores a run on the URL keeps busy (nil: one),
	// so that timed runs go side by side only where they fit (Target.Cores).
	Cores func(rest string) float64
	// InProcess says the stores run inside storecheck's processes (its own
	// or the workers a scenario starts), with no server beside them: no
	// heartbeat, election or lease of a server's own that a starved core
	// could trip. A run on one given less than its cores slows down; every
	// timeout in it is one its scenario sets and checks itself
	// (Target.InProcess).
	InProcess bool
}

// Schemes returns every known scheme, in the order List shows them.
func Schemes() []Scheme {
	return append([]Scheme{
		{
			Name:        "memory",
			Example:     "memory:",
			Description: "The in-memory reference model (model.Reference); nothing is durable.",
			Validate:    validateMemory,
			Open:        openMemory,
			Fresh:       true,
			InProcess:   true,
		},
		{
			Name:        "sqlite",
			Example:     "sqlite:/tmp/store.db",
			Description: "SQLite via modernc.org/sqlite (pure Go), WAL file (?synchronous=off|normal|full|extra; NORMAL by default) or sqlite::memory:, running the seed's SQL.",
			Validate:    func(rest string) error { return dbfile.Validate("sqlite", rest) },
			Open:        fileStore("sqlite", sqlite.Open, sqlite.WithSynchronous),
			InProcess:   true,
		},
		{
			Name:        "libsql",
			Example:     "libsql:/tmp/store.db",
			Description: "libSQL local file via github.com/tursodatabase/go-libsql (cgo), WAL (?synchronous=off|normal|full|extra; NORMAL by default), running the seed's SQL.",
			Validate:    func(rest string) error { return dbfile.Validate("libsql", rest) },
			Open:        fileStore("libsql", libsql.Open, libsql.WithSynchronous),
			InProcess:   true,
		},
		{
			Name:        libsql.ReplicaScheme,
			Example:     "libsql+replica:/tmp/replica.db?primary=http://127.0.0.1:8080&sync_interval=200ms",
			Description: "libSQL embedded replica (go-libsql, cgo) of an sqld primary: loads from the replica, commits on the primary; without primary= storecheck starts sqld (sqld=BIN, $SQLD, PATH, else image=); the token comes from $LIBSQL_AUTH_TOKEN or token_env=NAME.",
			Validate:    validateReplica,
			Open: func(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
				return libsql.OpenReplica(ctx, rest, cfg, replicaMutants())
			},
		},
		{
			Name:        lagsim.Scheme,
			Example:     "lagsim:/tmp/primary.db?lag=200ms",
			Description: "A simulation of embedded-replica lag, not libSQL: a SQLite primary, each client's replica a snapshot of it, refreshed every lag (seeded jitter); loads from the replica, commits on the primary.",
			Validate:    lagsim.Validate,
			Open:        lagsim.Open,
			InProcess:   true,
		},
		{
			Name:        mutants.Scheme,
			Example:     "mutant:blind-write",
			Description: "A deliberately broken SQLite store from the catalogue (storecheck mutants); NAME?path=FILE picks its file.",
			Validate:    mutants.Validate,
			Open:        mutants.Open,
			InProcess:   true,
		},
		{
			Name:        adapter.Scheme,
			Example:     "exec:python3 adapters/python/sqlite_store.py",
			Description: "A store in any language: the command (split like a shell would, no shell) answers the adapter protocol of docs/ADAPTER.md on stdin/stdout.",
			Validate:    adapter.Validate,
			Open:        adapter.OpenURL,
		},
		{
			Name:        "rqlite",
			Example:     "rqlite://127.0.0.1:4001,127.0.0.1:4003?level=strong",
			Description: "A running rqlite cluster (seed 001's guarded-upsert protocol via gorqlite); level=none|weak|linearizable|strong for reads; credentials from RQLITE_USERNAME/RQLITE_PASSWORD.",
			Validate:    func(rest string) error { _, err := rqlite.ParseURL(rest); return err },
			Open:        rqlite.OpenURL,
		},
		{
			Name:        managed.ProcessScheme,
			Example:     "rqlite+process:?nodes=3",
			Description: "rqlite on N rqlited processes this run starts on loopback (rqlited=PATH, $RQLITED or PATH); level=…; flags=-name=value,… for rqlited; data=memory|disk (default: a tmpfs when there is one with room); removed on close.",
			Validate:    func(rest string) error { _, err := managed.Parse(managed.Process, rest); return err },
			Open:        managed.OpenProcessURL,
			Fresh:       true,
			Cores:       func(rest string) float64 { return managed.Cores(managed.Process, rest) },
		},
		{
			Name:        managed.ContainerScheme,
			Example:     "rqlite+container:?nodes=3",
			Description: "rqlite on N containers this run starts on its own Docker network (image=IMAGE, default " + cluster.DefaultImage + "; image=build packs a local static rqlited); removed on close.",
			Validate:    func(rest string) error { _, err := managed.Parse(managed.Container, rest); return err },
			Open:        managed.OpenContainerURL,
			Fresh:       true,
			Cores:       func(rest string) float64 { return managed.Cores(managed.Container, rest) },
		},
	}, runSchemes()...)
}

// WithLogDir returns ctx telling the backends that start servers of their
// own (rqlite+process:, libsql+replica: without primary=) to write the
// servers' logs into dir, which outlives them: a run's evidence folder,
// logs/. Without it the logs live and die with the servers' data.
func WithLogDir(ctx context.Context, dir string) context.Context { return logdir.With(ctx, dir) }

// Open opens the store rawURL names, as "scheme:rest".
func Open(ctx context.Context, rawURL string, cfg model.Config) (model.Store, error) {
	s, rest, err := lookup(rawURL)
	if err != nil {
		return nil, err
	}
	if s.Open == nil {
		return nil, fmt.Errorf("backend %s: is a %s store, not an execution store", s.Name+":", s.Kind)
	}
	return s.Open(ctx, rest, cfg)
}

// Validate reports whether rawURL names a known backend with a well-formed
// rest, without opening anything.
func Validate(rawURL string) error {
	s, rest, err := lookup(rawURL)
	if err != nil {
		return err
	}
	if s.Validate != nil {
		return s.Validate(rest)
	}
	return nil
}

func lookup(rawURL string) (Scheme, string, error) {
	name, rest, ok := strings.Cut(rawURL, ":")
	if !ok || name == "" {
		return Scheme{}, "", fmt.Errorf("backend URL %q has no scheme (want scheme:…, known: %s)", rawURL, known())
	}
	for _, s := range Schemes() {
		if s.Name == name {
			return s, rest, nil
		}
	}
	return Scheme{}, "", fmt.Errorf("unknown backend %q (known: %s)", name+":", known())
}

func known() string {
	var names []string
	for _, s := range Schemes() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

func validateMemory(rest string) error {
	if rest != "" {
		return fmt.Errorf("backend memory: takes nothing after the colon, got %q", rest)
	}
	return nil
}

func openMemory(_ context.Context, rest string, cfg model.Config) (model.Store, error) {
	if err := validateMemory(rest); err != nil {
		return nil, err
	}
	return model.NewReference(cfg), nil
}

// ReplicaWriters looks up the deliberately broken writers a
// libsql+replica URL may name with mutant=.
func ReplicaWriters(name string) (libsql.Writer, error) {
	w, err := mutants.ReplicaWriter(name)
	if err != nil {
		return nil, err
	}
	return libsql.Writer(w), nil
}

// ReplicaReaders looks up the deliberately broken readers a
// libsql+replica URL may name with read_mutant=.
func ReplicaReaders(name string) (libsql.Reader, error) {
	r, err := mutants.ReplicaReader(name)
	if err != nil {
		return nil, err
	}
	return libsql.Reader(r), nil
}

// replicaMutants are the broken writers and readers a libsql+replica URL
// may name.
func replicaMutants() libsql.Mutants {
	return libsql.Mutants{Writers: ReplicaWriters, Readers: ReplicaReaders}
}

// validateReplica checks a libsql+replica URL, its mutant= and
// read_mutant= included.
func validateReplica(rest string) error {
	t, err := libsql.ParseReplicaURL(rest)
	if err != nil {
		return err
	}
	if t.Mutant != "" {
		if _, err := mutants.ReplicaBreaks(t.Mutant); err != nil {
			return fmt.Errorf("%s: mutant: %w", libsql.ReplicaScheme, err)
		}
	}
	if t.ReadMutant != "" {
		if _, err := mutants.ReplicaReadBreaks(t.ReadMutant); err != nil {
			return fmt.Errorf("%s: read_mutant: %w", libsql.ReplicaScheme, err)
		}
	}
	return nil
}

// fileStore is the Open of a file backend (sqlite:, libsql:): the URL's
// path and its synchronous= setting, passed to the backend's open.
func fileStore[O any](name string, open func(context.Context, string, model.Config, ...O) (*sqlstore.Store, error), synchronous func(string) O) func(context.Context, string, model.Config) (model.Store, error) {
	return func(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
		f, err := dbfile.ParseFile(name, rest)
		if err != nil {
			return nil, err
		}
		var opts []O
		if f.Synchronous != "" {
			opts = append(opts, synchronous(f.Synchronous))
		}
		return open(ctx, f.Path, cfg, opts...)
	}
}
