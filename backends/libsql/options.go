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

	// Replica is an embedded replica of an sqld primary (URL form
	// libsql+replica:PATH?primary=URL): reads from the local replica at
	// PATH, writes in one transaction on the primary. It returns a
	// different store, so it is opened with OpenReplica or
	// OpenReplicaCluster (replica.go), not Open, which refuses it.
	Replica
)

// settings are everything Open can be told.
type settings struct {
	dbfile.Settings
	mode Mode
	// Store is passed to sqlstore.New; its Name defaults to the backend's.
	Store sqlstore.Options
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

// WithMode selects where the database lives; Open supports only Local
// (see Replica).
func WithMode(m Mode) Option {
	return func(s *settings) { s.mode = m }
}
