// Package procfault injects process faults into the embedded backends —
// SIGKILL and SIGSTOP of worker processes that share one database file — and
// checks what the store promises across them: the crash-recovery and
// writer-stall scenarios (docs/CONTRACT.md §1, properties 2, 3, 5 and 9).
//
// # Workers
//
// The parent re-executes its own binary as a worker process (package
// chaos/worker, roles Roles): a binary plays the role through worker.Main,
// which the storecheck binary calls first thing in main and a test binary
// in its TestMain. A worker opens the store itself — sqlite: and
// libsql: files with sqlstore's BeforeCommit hook installed, mutant: URLs as
// backends.Open does — and reports to the parent in JSON lines on a pipe
// (message.go): each commit before its call, at its BeforeCommit hook (the
// transaction's statements ran, COMMIT is next) and once it returned. The
// parent learns of an acknowledgement only after Commit returned, and lines a
// worker wrote before it died are still read after its death.
//
// No worker outlives a run (proc.go): each runs in its own process group,
// SIGKILLed when the run's context ends (an interrupt) or the run is done;
// the kernel SIGKILLs it if the parent dies first (Pdeathsig); every worker
// is reaped. Every worker's life and every wait of the parent is bounded.
//
// # crash-recovery
//
// Cycle after cycle on the same file, a worker recovers the file, reports
// PRAGMA integrity_check and a dump of the six tables, then commits back to
// back (one writer, witness tokens in everything it writes, every commit
// with at least one emit) until the parent SIGKILLs it at a seeded moment
// (plan.go): held in commit K's BeforeCommit hook (after every statement,
// before COMMIT), a random delay into commit K's COMMIT, or anywhere around
// commit K. The next worker's report is checked (ledger.go, tables.go):
// integrity is "ok"; every acknowledged commit of the run is there with its
// emits, dedupe marker and spawns (durability); the commit in flight at the
// kill is all or nothing — its version advanced exactly when its emits,
// dedupe marker, timers, spawns and trace step exist (atomicity); and the
// tables equal the reference model replayed with the acknowledged commits,
// with or without the one in flight (model.Diff). A last worker only
// recovers and reports. The errors wrap ErrIntegrity, ErrDurability or
// ErrAtomicity.
//
// # writer-stall
//
// Several workers run shares of a recorded concurrent workload
// (workload.Drive) on one file. One announces from its BeforeCommit hook
// that its commit holds the write lock; the parent SIGSTOPs it, and SIGCONTs
// it after a window longer than the workers' busy timeout, so the other
// workers' writes fail with "database is locked" meanwhile, recorded as
// failed or indeterminate. The histories, stamped on one clock shared by
// every process (merge.go explains the choice: one wall-clock reading per
// process mapped onto its monotonic clock, a stepped wall clock detected),
// are merged, healed by the parent and checked by package linearizability:
// porcupine per execution and the global atomicity, delivery, dedupe and
// timer checks. A commit of another worker that succeeded entirely inside
// the stall is an isolation error: the stopped worker held the lock.
//
// # Synchronous settings: what they guarantee, what a process crash shows
//
// Both embedded backends run in WAL mode with PRAGMA synchronous=NORMAL by
// default (backends/internal/dbfile). In WAL mode:
//
//   - NORMAL syncs the WAL only at checkpoints. A commit is in the WAL, in
//     the operating system's page cache, when COMMIT returns: it survives a
//     crash of the process, but a power loss or kernel crash may lose the
//     last commits (never corrupt the file).
//   - FULL (and EXTRA) also fsync the WAL at every commit, so an
//     acknowledged commit survives a power loss too, at the price of one
//     fsync per commit.
//   - OFF never syncs.
//
// A SIGKILL ends the process, not the kernel: whatever write(2) handed to
// the page cache reaches the file. So crash-recovery checks exactly the
// process-crash promise, the same for every setting, and cannot show
// power-loss behaviour; it passes even with synchronous=OFF
// (CrashOptions.Synchronous), and a pass says nothing about power loss.
// That needs a cut below the page cache (a VM or a dm-flakey device), which
// this package does not do. docs/DURABILITY.md has the figures measured.
package procfault
