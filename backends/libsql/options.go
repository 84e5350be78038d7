package libsql

import (
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/sqlstore"
)

// Name is the backend's name, used as the prefix of its errors.
const Name = "libsql"

// Mode says where the database lives.
type Mode int

const (
	// Local is a database file on this machine, opened as file:PATH; reads
	// and writes are local, like SQLite.
	Local Mode = iota

	// An embedded-replica mode (URL form libsql+replica:PATH?primary=URL)
	// belongs here: reads from the local replica at PATH, writes to the
	// sqld primary. It would build its connector with
	// libsql.NewEmbeddedReplicaConnector(PATH, URL, …) instead of the local
	// one and wrap it the same way (see initConnector), so that its
	// connections get the same pragmas. It is not built yet.
)

// settings are everything Open can be told.
type settings struct {
	dbfile.Settings
	mode Mode
}

// Option changes one setting of Open.
type Option func(*settings)

// WithSynchronous sets PRAGMA synchronous on every connection: "OFF",
// "NORMAL" (default), "FULL" or "EXTRA".
func WithSynchronous(mode string) Option {
	return func(s *settings) { s.Synchronous = mode }
}

// WithBusyTimeout sets how long a connection waits for another's lock.
// go-libsql sets none, so without it concurrent writers fail at once with
// "database is locked".
func WithBusyTimeout(d time.Duration) Option {
	return func(s *settings) { s.BusyTimeout = d }
}

// WithMaxConns caps the connection pool of a file database (default 8).
func WithMaxConns(n int) Option {
	return func(s *settings) { s.MaxConns = n }
}

// WithStoreOptions passes statements and hooks to sqlstore, e.g. to build a
// deliberately broken variant.
func WithStoreOptions(o sqlstore.Options) Option {
	return func(s *settings) { s.Store = o }
}

// WithMode selects where the database lives; only Local exists today.
func WithMode(m Mode) Option {
	return func(s *settings) { s.mode = m }
}
