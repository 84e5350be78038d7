// Package adapter is the harness side of the adapter protocol
// (docs/ADAPTER.md): the "exec:" backend, which runs a store written in any
// language as a child process speaking JSON lines on its stdin and stdout,
// and uses it like any other model.Store.
//
// Decision: one adapter process per concurrent client. A Store keeps a pool
// of processes that all serve the same store (the same database file, say);
// an operation takes an idle process, starting one when all are busy (up to
// Options.MaxProcesses), sends its one request, reads the response and gives
// the process back. A process never has two requests in flight. This gives
// real concurrency against one database to adapters that are themselves
// single-threaded (Python's sqlite3), it is how engines deploy (worker
// processes sharing a database), and a process fault (SIGKILL, SIGSTOP) hits
// exactly one operation.
//
// An adapter that cannot start or fails its hello makes Open fail, so the run
// is NOT RUN with the reason. A malformed line, a response with the wrong id,
// an adapter that exits or hangs with a request in flight break the store:
// the operation fails (a write's outcome unknown) and every later one fails
// at once with the first error, so no run through a broken adapter can pass.
// Those errors wrap ErrBroken (model.ErrBroken), and Store.Broken
// (model.Breakable) returns the first, so that a harness stops at once and
// reports it: a FAIL of the backend (guarantee "adapter protocol").
// Processes run in their own process group, die with the harness on Linux
// (Pdeathsig), and are killed and reaped on Close, when the context given to
// Open ends, and on every failure.
package adapter
