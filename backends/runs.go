package backends

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/runmutants"
	"github.com/storecheck/storecheck/backends/runsqlite"
	"github.com/storecheck/storecheck/model/runstore"
)

// Kind is the contract a scheme's stores keep.
type Kind string

const (
	// KindExecution is the execution store (model.Store), opened with Open.
	// It is the zero value, so that every scheme that says nothing is one.
	KindExecution Kind = ""
	// KindRuns is the run store (model/runstore.Store), opened with OpenRuns.
	KindRuns Kind = "run"
)

// String names the kind as error messages use it.
func (k Kind) String() string {
	if k == KindExecution {
		return "execution"
	}
	return string(k)
}

// runSchemes are the run-store schemes. They are listed with the others
// (List, `storecheck backends`), validated by Validate, and opened by
// OpenRuns; Open refuses them.
//
// Decision: one table for both kinds, with a Kind field, rather than a
// second table: a URL names one scheme whatever its kind, so `storecheck run`
// validates and lists them the same way, and a scenario learns from
// IsRunStore which contract it is pointed at.
func runSchemes() []Scheme {
	return []Scheme{
		{
			Name:        "runs+memory",
			Example:     "runs+memory:",
			Description: "Run store: the in-memory reference model (model/runstore.Reference); nothing is durable.",
			Validate:    validateRunsMemory,
			InProcess:   true,
			Kind:        KindRuns,
			OpenRuns: func(_ context.Context, rest string) (runstore.Store, error) {
				if err := validateRunsMemory(rest); err != nil {
					return nil, err
				}
				return runstore.NewReference(), nil
			},
		},
		{
			Name:        "runs+sqlite",
			Example:     "runs+sqlite:/tmp/runs.db",
			Description: "Run store: openrath's SQLiteRunStore schema on modernc.org/sqlite (WAL file, ?synchronous=off|normal|full|extra, or :memory:), BEGIN IMMEDIATE per mutation.",
			Validate:    func(rest string) error { return dbfile.Validate(runsqlite.Name, rest) },
			InProcess:   true,
			Kind:        KindRuns,
			OpenRuns: func(ctx context.Context, rest string) (runstore.Store, error) {
				f, err := dbfile.ParseFile(runsqlite.Name, rest)
				if err != nil {
					return nil, err
				}
				var opts []runsqlite.Option
				if f.Synchronous != "" {
					opts = append(opts, runsqlite.WithSynchronous(f.Synchronous))
				}
				return runsqlite.Open(ctx, f.Path, opts...)
			},
		},
		{
			Name:        runmutants.Scheme,
			Example:     "runs+mutant:renew-expired",
			Description: "Run store: a deliberately broken runs+sqlite store (" + strings.Join(runmutants.Names(), ", ") + "); NAME?path=FILE picks its file.",
			Validate:    runmutants.Validate,
			InProcess:   true,
			Kind:        KindRuns,
			OpenRuns:    runmutants.Open,
		},
	}
}

func validateRunsMemory(rest string) error {
	if rest != "" {
		return fmt.Errorf("backend runs+memory: takes nothing after the colon, got %q", rest)
	}
	return nil
}

// OpenRuns opens the run store rawURL names, as "scheme:rest".
func OpenRuns(ctx context.Context, rawURL string) (runstore.Store, error) {
	s, rest, err := lookup(rawURL)
	if err != nil {
		return nil, err
	}
	if s.OpenRuns == nil {
		return nil, fmt.Errorf("backend %s: is an %s store, not a run store (run-store URLs: runs+memory:, runs+sqlite:PATH, runs+mutant:NAME)", s.Name+":", s.Kind)
	}
	return s.OpenRuns(ctx, rest)
}

// IsRunStore reports whether rawURL names a run-store scheme.
func IsRunStore(rawURL string) bool {
	s, _, err := lookup(rawURL)
	return err == nil && s.Kind == KindRuns
}

// RunStoreFile returns the database file a run-store URL names, when
// several processes can open it: runs+sqlite:PATH (not :memory:) and
// runs+mutant:NAME?path=PATH.
func RunStoreFile(rawURL string) (string, bool) {
	name, rest, _ := strings.Cut(rawURL, ":")
	switch name {
	case "runs+sqlite":
		if rest == "" || rest == dbfile.Memory {
			return "", false
		}
		return rest, true
	case runmutants.Scheme:
		_, query, _ := strings.Cut(rest, "?")
		v, err := url.ParseQuery(query)
		if err != nil || v.Get("path") == "" {
			return "", false
		}
		return v.Get("path"), true
	}
	return "", false
}
