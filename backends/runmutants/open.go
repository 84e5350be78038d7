package runmutants

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/backends/runsqlite"
	"github.com/storecheck/storecheck/model/runstore"
)

// Scheme is the URL scheme of the catalogue, without its colon.
const Scheme = "runs+mutant"

// target is a parsed URL: the mutant and its file ("" for a fresh file in a
// folder of its own).
type target struct {
	m    Mutant
	path string
}

// parse reads the part of a URL after "runs+mutant:": NAME or NAME?path=FILE.
func parse(rest string) (target, error) {
	name, query, _ := strings.Cut(rest, "?")
	if name == "" {
		return target{}, fmt.Errorf("%s: no name (want %s:NAME, known: %s)", Scheme, Scheme, strings.Join(Names(), ", "))
	}
	m, err := Lookup(name)
	if err != nil {
		return target{}, err
	}
	path, err := dbfile.PathParam(Scheme+":"+name, query)
	if err != nil {
		return target{}, err
	}
	return target{m: m, path: path}, nil
}

// Synchronous is the PRAGMA synchronous the mutant rest names reports, in
// upper case; "" for the default, NORMAL, or a URL that names none.
func Synchronous(rest string) string {
	t, err := parse(rest)
	if err != nil {
		return ""
	}
	return t.m.claims
}

// Validate checks a URL's rest without opening anything.
func Validate(rest string) error {
	_, err := parse(rest)
	return err
}

// Open opens the mutant rest names (NAME or NAME?path=FILE). Without a path
// the database is a fresh file in a folder removed on Close.
func Open(ctx context.Context, rest string) (runstore.Store, error) {
	t, err := parse(rest)
	if err != nil {
		return nil, err
	}
	return OpenMutant(ctx, t.m, t.path)
}

// OpenMutant opens m on the database at path, or on a fresh file in a
// folder of its own, removed on Close, when path is "".
func OpenMutant(ctx context.Context, m Mutant, path string) (runstore.Store, error) {
	st, err := m.Statements()
	if err != nil {
		return nil, err
	}
	dir := ""
	if path == "" {
		if dir, err = tmpfs.MkdirTemp("", "storecheck-runs-mutant-"); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", Scheme, m.Name, err)
		}
		path = filepath.Join(dir, "runs.db")
	}
	opts := []runsqlite.Option{runsqlite.WithStatements(Scheme+":"+m.Name, func(s *runsqlite.Statements) { *s = st })}
	if m.synchronous != "" {
		opts = append(opts, runsqlite.WithSynchronous(m.synchronous))
	}
	s, err := runsqlite.Open(ctx, path, opts...)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	return &store{Store: s, dir: dir}, nil
}

// store is a mutant that removes its folder, if it has one, on Close.
type store struct {
	*runsqlite.Store
	dir string
}

// Close closes the database and removes the mutant's own folder.
func (s *store) Close() error {
	err := s.Store.Close()
	if s.dir != "" {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}
