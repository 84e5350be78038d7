// Package sqlite is the execution store of harel's SqliteStore on
// modernc.org/sqlite, a pure-Go SQLite: the seed's SQL run by sqlstore over a
// pool of connections to one database file.
//
// Every pooled connection gets busy_timeout (10 s by default), so concurrent
// writers queue instead of failing, and journal_mode=WAL, so readers never
// wait for writers. PRAGMA synchronous is configurable and defaults to
// NORMAL. What each setting guarantees, in WAL mode:
//
//   - NORMAL: every acknowledged commit survives a crash of the process; a
//     power loss or OS crash may lose the last commits (never corrupt the
//     database), because the WAL is synced only at checkpoints.
//   - FULL (and EXTRA): the WAL is synced at every commit, so an acknowledged
//     commit also survives a power loss, at the price of one fsync per commit.
//   - OFF: no syncs at all; only for throw-away databases.
//
// The path ":memory:" opens a private in-memory database on a single
// connection (each connection would otherwise see its own empty database), so
// its operations run one at a time.
package sqlite

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/stmtcache"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Name is the backend's name, used as the prefix of its errors.
const Name = "sqlite"

// settings are everything Open can be told.
type settings struct {
	dbfile.Settings
	// Store is passed to sqlstore.New; its Name defaults to the backend's.
	Store sqlstore.Options
}

// Option changes one setting of Open.
type Option func(*settings)

// WithSynchronous sets PRAGMA synchronous: "OFF", "NORMAL" (default),
// "FULL" or "EXTRA".
func WithSynchronous(mode string) Option {
	return func(s *settings) { s.Synchronous = mode }
}

// WithBusyTimeout sets how long a connection waits for another's lock.
func WithBusyTimeout(d time.Duration) Option {
	return func(s *settings) { s.BusyTimeout = d }
}

// WithMaxConns caps the connection pool of a file database (default 8).
func WithMaxConns(n int) Option {
	return func(s *settings) { s.MaxConns = n }
}

// WithoutAutoCheckpoint turns SQLite's automatic checkpoints off: the
// caller checkpoints the WAL itself (lagsim's primary, whose held snapshots
// would make every commit past the default 1000 pages try one).
func WithoutAutoCheckpoint() Option {
	return func(s *settings) { s.NoAutoCheckpoint = true }
}

// WithStoreOptions passes statements and hooks to sqlstore, e.g. to build a
// deliberately broken variant.
func WithStoreOptions(o sqlstore.Options) Option {
	return func(s *settings) { s.Store = o }
}

// Open opens (creating if needed) the database at path, or a private one for
// ":memory:", and creates the six tables. The directory must exist.
func Open(ctx context.Context, path string, cfg model.Config, opts ...Option) (*sqlstore.Store, error) {
	set := settings{Settings: dbfile.Defaults()}
	for _, o := range opts {
		o(&set)
	}
	if err := set.Check(Name); err != nil {
		return nil, err
	}
	if err := dbfile.CheckPath(Name, path); err != nil {
		return nil, err
	}
	db, err := stmtcache.OpenDB("sqlite", dsn(path, set.Settings))
	if err != nil {
		return nil, fmt.Errorf("%s: open %q: %w", Name, path, err)
	}
	conns := set.MaxConns
	if path == dbfile.Memory {
		conns = 1
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if set.Store.Name == "" {
		set.Store.Name = Name
	}
	s, err := sqlstore.New(ctx, db, cfg, set.Store)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: open %q: %w", Name, path, err)
	}
	return s, nil
}

// dsn builds modernc's data source name: a file: URI whose _pragma
// parameters the driver runs on every new connection.
func dsn(path string, set dbfile.Settings) string {
	if path == dbfile.Memory {
		return dbfile.Memory
	}
	q := url.Values{}
	for _, p := range set.Pragmas() {
		q.Add("_pragma", p.Name+"("+p.Value+")")
	}
	return dbfile.FileURI(path) + "?" + q.Encode()
}
