// Package rqlite is the execution store of harel's RqliteStore (seed 001):
// the six tables of the SQL family in rqlite, SQLite behind Raft, reached over
// its HTTP API through github.com/rqlite/gorqlite.
//
// rqlite has no interactive transaction, so a commit is one
// /db/execute?transaction request carrying the guarded statement list of
// package guarded (backends/rqlite/guarded, shared with the guarded-upsert
// twin of the mutant catalogue): the guarded upsert first, then every
// side-write conditioned on the executions row holding exactly this commit's
// bytes, the timers as delete-then-guarded-insert, the trace step and its
// trim last. The CAS lost when the first result affected no row; the store
// then reads the stored version (always at level strong) for the conflict's
// Found.
//
// Reads go out at a configurable consistency level (none, weak,
// linearizable, strong; strong by default, as in the seed). Opening retries
// until the cluster has a leader and the schema is created, within a bound.
//
// # What a failed write means
//
// A write error wraps model.ErrNotApplied only when the request provably did
// nothing: it was never completely sent (a refused connection, say), rqlite
// refused it before it reached the Raft log (HTTP 400, 401, 503 "leader not
// found"), or a statement of the transaction failed, which rolls the whole
// transaction back. Every other failure — a timeout, a connection lost after
// the request was sent, an HTTP 500 from a failed forward, a top-level error
// such as "leadership lost while committing log" — leaves the outcome
// unknown and is returned as it is, to be recorded as indeterminate.
//
// # Connections
//
// gorqlite re-sends a failed POST to the next peer it knows, which would
// turn a write whose reply was lost into a second attempt that loses its
// CAS: a conflict reported for a write that won. So every gorqlite
// connection here knows exactly one node (cluster discovery off), and the
// store chooses nodes itself: it prefers one node and moves to the next when
// a node cannot be reached; it re-sends a read, and a write only when the
// write provably was not sent. Connections are pooled per node and each is
// used by one goroutine at a time. Credentials, if any, come from the
// environment (RQLITE_USERNAME, RQLITE_PASSWORD) and are set on each request,
// never written into a URL.
//
// Opening a backend by URL: rqlite://HOST:PORT[,HOST:PORT…]?level=strong
// (see ParseURL).
package rqlite
