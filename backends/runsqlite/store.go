package runsqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/stmtcache"
	"github.com/storecheck/storecheck/model/runstore"
)

// Name is the backend's name, used as the prefix of its errors.
const Name = "runs+sqlite"

// settings are Open's knobs.
type settings struct {
	file       dbfile.Settings
	statements Statements
	name       string
}

// Option changes one setting of Open.
type Option func(*settings)

// WithBusyTimeout sets how long a connection waits for another's lock.
func WithBusyTimeout(d time.Duration) Option { return func(s *settings) { s.file.BusyTimeout = d } }

// WithSynchronous sets PRAGMA synchronous: OFF, NORMAL (default), FULL or
// EXTRA.
func WithSynchronous(mode string) Option { return func(s *settings) { s.file.Synchronous = mode } }

// WithMaxConns caps the connection pool of a file database (default 8).
func WithMaxConns(n int) Option { return func(s *settings) { s.file.MaxConns = n } }

// WithStatements changes the SQL the store runs, to build a deliberately
// broken variant; name prefixes its errors.
func WithStatements(name string, change func(*Statements)) Option {
	return func(s *settings) {
		change(&s.statements)
		s.name = name
	}
}

// Store is a runstore.Store over one SQLite database.
type Store struct {
	db   *sql.DB
	st   Statements
	name string
}

var (
	_ runstore.Store    = (*Store)(nil)
	_ runstore.Dumper   = (*Store)(nil)
	_ runstore.Resetter = (*Store)(nil)
)

// Open opens (creating if needed) the database at path, or a private one for
// ":memory:", and creates the tables. The directory must exist.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	set := settings{file: dbfile.Defaults(), statements: SQLite(), name: Name}
	for _, o := range opts {
		o(&set)
	}
	if err := set.file.Check(set.name); err != nil {
		return nil, err
	}
	if err := dbfile.CheckPath(set.name, path); err != nil {
		return nil, err
	}
	db, err := stmtcache.OpenDB("sqlite", dsn(path, set.file))
	if err != nil {
		return nil, fmt.Errorf("%s: open %q: %w", set.name, path, err)
	}
	conns := set.file.MaxConns
	if path == dbfile.Memory {
		conns = 1 // every connection to :memory: is a database of its own
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db, st: set.statements, name: set.name}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: open %q: %w", set.name, path, err)
	}
	return s, nil
}

// dsn is modernc's data source name: a file: URI whose _pragma parameters
// run on every new connection, busy_timeout first.
func dsn(path string, set dbfile.Settings) string {
	q := url.Values{}
	for _, p := range set.Pragmas() {
		q.Add("_pragma", p.Name+"("+p.Value+")")
	}
	q.Add("_pragma", "foreign_keys(1)")
	if path == dbfile.Memory {
		return "file::memory:?" + q.Encode()
	}
	return dbfile.FileURI(path) + "?" + q.Encode()
}

// migrate creates the schema and records migration 1.
func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(c *sql.Conn) error {
		for _, q := range s.st.Schema {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		// The migration's own timestamp is bookkeeping, not contract data:
		// no Dump shows it, so it may come from the wall clock.
		_, err := c.ExecContext(ctx, `INSERT OR IGNORE INTO schema_migrations(version, applied_at) VALUES (1, ?)`,
			runstore.FormatTime(time.Now()))
		return err
	})
}

// DB returns the underlying database, for tests that look at the tables.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", s.name, err)
	}
	return nil
}

// Reset empties every contract table in one transaction.
func (s *Store) Reset(ctx context.Context) error {
	err := s.write(ctx, func(c *sql.Conn) error {
		for _, t := range []string{"run_events", "checkpoints", "interrupts", "run_leases", "runs"} {
			if _, err := c.ExecContext(ctx, "DELETE FROM "+t); err != nil {
				return fmt.Errorf("empty %s: %w", t, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: reset: %w", s.name, err)
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction on one pooled connection
// and commits it. When fn fails the transaction is rolled back; a contract
// error (runstore.Kind names it) comes back as it is, anything else marked
// runstore.ErrNotApplied, since COMMIT was never sent. A failed COMMIT is marked
// so only if the ROLLBACK after it succeeds; otherwise its outcome is
// unknown. COMMIT and ROLLBACK run even when ctx is already cancelled, and a
// transaction never goes back to the pool open.
func (s *Store) write(ctx context.Context, fn func(c *sql.Conn) error) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return notApplied(fmt.Errorf("get connection: %w", err))
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		_, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return notApplied(fmt.Errorf("begin: %w", err))
	}
	if err := fn(c); err != nil {
		rollback(ctx, c)
		if k := runstore.Kind(err); k != "other" {
			return err
		}
		return notApplied(err)
	}
	if _, err := c.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		err = fmt.Errorf("commit transaction: %w", err)
		if rollback(ctx, c) {
			return notApplied(err)
		}
		return err
	}
	return nil
}

// rollback ends the open transaction on c and reports whether it did; if
// it cannot, the connection is discarded (closing it rolls back).
func rollback(ctx context.Context, c *sql.Conn) bool {
	if _, err := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
		return false
	}
	return true
}

func notApplied(err error) error {
	if errors.Is(err, runstore.ErrNotApplied) {
		return err
	}
	return fmt.Errorf("%w: %w", runstore.ErrNotApplied, err)
}

// errorf prefixes an error with the store's name.
func (s *Store) errorf(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", s.name, op, err)
}

// asConflict turns a constraint violation (a taken id, a second active run
// in a session) into runstore.ErrConflict naming what, and leaves other errors.
func asConflict(err error, what string) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
		return fmt.Errorf("%w: %s: %v", runstore.ErrConflict, what, err)
	}
	return err
}
