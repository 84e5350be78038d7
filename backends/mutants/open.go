package mutants

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Scheme is the URL scheme of the catalogue, without its colon.
const Scheme = "mutant"

// target is a parsed mutant URL: the entry and the file it runs on ("" for
// a fresh file in a folder of its own).
type target struct {
	m    Mutant
	path string
}

// parse reads the part of a mutant URL after "mutant:": NAME or
// NAME?path=FILE.
func parse(rest string) (target, error) {
	name, query, _ := strings.Cut(rest, "?")
	if name == "" {
		return target{}, fmt.Errorf("mutant: no name (want mutant:NAME, known: %s)", strings.Join(Names(), ", "))
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

// Validate checks a mutant URL's rest (NAME or NAME?path=FILE) without
// opening anything.
func Validate(rest string) error {
	_, err := parse(rest)
	return err
}

// Synchronous is the PRAGMA synchronous the mutant rest names reports
// (what it promises of durability), in upper case; "" for the backends'
// default, NORMAL, or a URL that names no mutant.
func Synchronous(rest string) string {
	t, err := parse(rest)
	if err != nil {
		return ""
	}
	return t.m.claims
}

// Open opens the mutant that rest names (NAME or NAME?path=FILE).
func Open(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
	t, err := parse(rest)
	if err != nil {
		return nil, err
	}
	return t.open(ctx, cfg)
}

// open opens the entry on its file, or on a fresh one in a folder of its
// own, and wraps it when the entry says so.
func (t target) open(ctx context.Context, cfg model.Config) (model.Store, error) {
	name := Scheme + ":" + t.m.Name
	b := &base{name: name, st: sqlstore.SQLite()}
	path := t.path
	if path == "" {
		dir, err := tmpfs.MkdirTemp("", "storecheck-mutant-")
		if err != nil {
			return nil, fmt.Errorf("%s: temporary folder: %w", name, err)
		}
		b.dir, path = dir, filepath.Join(dir, "store.db")
	}
	if t.m.statements != nil {
		t.m.statements(&b.st)
	}
	st := b.st
	opts := []sqlite.Option{sqlite.WithStoreOptions(sqlstore.Options{Name: name, Statements: &st})}
	if t.m.synchronous != "" {
		opts = append(opts, sqlite.WithSynchronous(t.m.synchronous))
	}
	inner, err := sqlite.Open(ctx, path, cfg, opts...)
	if err != nil {
		return nil, errors.Join(err, b.removeDir())
	}
	b.Store, b.path = inner, path
	if t.m.wrap == nil {
		return b, nil
	}
	s, err := t.m.wrap(ctx, b, cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: open: %w", name, err), b.Close())
	}
	return s, nil
}

// base is the SQLite store a mutant derives from, with what the mutant owns
// besides it. Every mutant embeds it, so Dump, Reset and SetTraceMax are the
// SQLite store's unless a mutant says otherwise.
type base struct {
	*sqlstore.Store
	name string              // "mutant:NAME", the prefix of every error
	st   sqlstore.Statements // the statements the store runs
	path string              // the database file
	dir  string              // the folder the store owns; "" when the file was given
	// closers release what a wrapper opened besides the store; they run
	// before the folder is removed.
	closers []func() error
}

// Close closes the store and what the mutant opened, then removes the
// folder the store owns.
func (b *base) Close() error {
	errs := []error{b.Store.Close()}
	for _, c := range b.closers {
		errs = append(errs, c())
	}
	errs = append(errs, b.removeDir())
	return errors.Join(errs...)
}

func (b *base) removeDir() error {
	if b.dir == "" {
		return nil
	}
	if err := os.RemoveAll(b.dir); err != nil {
		return fmt.Errorf("%s: remove %s: %w", b.name, b.dir, err)
	}
	return nil
}

// errorf formats an error prefixed with the mutant's name.
func (b *base) errorf(format string, a ...any) error {
	return fmt.Errorf(b.name+": "+format, a...)
}
