// Package runsqlite is the run store of openrath's SQLiteRunStore (seed 004)
// on modernc.org/sqlite, written fresh in Go: the seed's tables for runs,
// run_events, checkpoints, interrupts, run_leases and schema_migrations,
// and one BEGIN IMMEDIATE transaction per mutation, so that mutations are
// serialised by SQLite's write lock and a reader never sees half of one.
//
// Every pooled connection gets busy_timeout (10 s by default), so concurrent
// writers queue instead of failing, journal_mode=WAL, so readers do not wait
// for writers, and foreign_keys=ON, as the seed's _connect. Several
// processes may open the same file at once; the lease-stall scenario does.
//
// Unlike the seed, the store never reads the wall clock: every timestamp and
// every expiry test uses the time in the request (see model/runstore). The SQL a
// deliberately broken variant may change is gathered in Statements.
package runsqlite
