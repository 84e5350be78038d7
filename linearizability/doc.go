// Package linearizability records concurrent histories against any
// model.Store and checks them: per execution with porcupine (a versioned
// compare-and-swap register, and the trace ring), and across the whole store
// with checks porcupine is not the tool for (the chain of winning commits,
// atomicity of side-writes, the outbox and spawn queues, the dedupe ledger,
// timers).
//
// A run goes through three stages, in the manner of etcd's robustness tests:
//
//  1. Record. A Recorder wraps the store and hands out Clients. Every call is
//     stamped at call and return with one monotonic base clock, under a lock.
//     A client may have one operation in flight; a second is refused at
//     record time. A write whose outcome is unknown is recorded as
//     indeterminate, with return time EndOfHistory, and its client carries on
//     under a new client id, because porcupine needs each client sequential.
//  2. Heal. After the traffic stops, a heal client reads the final tables
//     with no faults (Recorder.HealClient); those reads are part of the
//     history and are marked Heal.
//  3. Check. Check validates the history's assumptions, runs porcupine per
//     partition, then the global checks, and returns a Report whose error
//     names every guarantee broken (errors.Is with ErrLostUpdate,
//     ErrAtomicity, …).
//
// # Witnesses
//
// The global checks map every stored row back to the one attempt that wrote
// it. That is decidable because a workload writes unique witnesses: every
// commit's execution carries a unique top-level "token" string and the
// token it believes is stored at the version it commits from ("prev"); its
// emits, spawns and timers carry unique event ids, child ids and fire_at
// values; trace entries carry a unique "token". The winning commits of an
// execution are then the chain of prev links from its final row, which must
// have exactly (final version) members. See global.go.
//
// # Replica reads
//
// A client made with Recorder.NewClient and a Replica name reads from an
// embedded replica, whose loads may be stale by contract. Its reads are
// marked (Operation.Replica) and kept out of porcupine, so that a register
// partition holds the commits and the primary's reads only, checked as
// strictly as ever; they are held instead to the replica rules of
// replica.go: a committed version, never older than what the same replica
// showed before, including the replica's own writes when it promises
// read-your-writes, and equal to the primary's after the final heal
// (ErrReplicaRead, ErrReplicaConvergence); and every replica read, of any
// table, must show a state some prefix of the commits produces, no less
// than what the same replica showed before of any table (prefix.go: a
// stale read is allowed, a torn one is not). Histories without replica
// clients are checked exactly as before.
//
// Histories are saved and loaded as JSON lines (WriteJSONL, ReadJSONL) and
// can be re-checked offline (CheckFile); a failing partition can be drawn
// with porcupine's HTML visualization (Visualize).
package linearizability
