// Package replica is the execution store of an embedded replica (harel's
// LibsqlStore with sync_url, seed 000): reads are served by a local copy of
// the database that a primary feeds, and writes go to the primary, where the
// version compare-and-swap is decided inside the commit's transaction.
//
// A Store is built from two stores and a sync function. The primary store
// takes every write; the reader store, opened on the replica, answers
// load, load_for_event, is_processed, list_executions, read_trace and the
// queue and timer reads; Sync copies the primary's latest state into the
// replica. Package lagsim builds one from two SQLite files (a simulation),
// package libsql from an sqld primary and a go-libsql embedded replica.
//
// # When the replica catches up
//
// A Store syncs on a seeded Schedule: a background loop waits Interval, give
// or take Jitter, between syncs; with Interval 0 it syncs before every read
// instead (the freshest a replica can be). With read-your-writes on, every
// write that succeeded is followed by a sync, so that the writer's next read
// includes it. Syncs are serialised, so a replica never goes back in time.
// A sync that fails (the primary is unreachable) leaves the replica as it
// was: reads go on, stale.
//
// # What it promises, and what it does not
//
// Commits are linearizable (they are the primary's). Reads may be stale:
// they show some committed version at least as new as the last one this
// replica showed, and, with read-your-writes, at least the client's own last
// write. A client that loads from a stale replica and commits gets a
// *model.StoreConflict whose Found is the primary's version: a spurious
// conflict, never a lost update. package linearizability checks exactly
// that (see its replica.go).
//
// Faults: StallSyncs stops the background syncs of one replica until
// ResumeSyncs; the caller's own fault injection (a dead primary, a cut
// link) makes syncs and writes fail.
package replica
