// Package leasestall is the lease-stall workload: several workers claim,
// renew, checkpoint and finish runs of one run store at once while a fault
// stalls a worker past its lease; another worker claims the run; the stalled
// worker wakes and tries to commit and finish with its old token. Every
// operation is recorded and the history checked (linearizability/leases):
// the stale token is always rejected, no run is ever held by two live
// leases, a run's fencing tokens strictly increase, event and checkpoint
// numbers have no gaps, idempotent creates racing each other return one
// run. Goroutine mode also checks that a victim claiming alone gets the
// queued run of highest priority, its round's, though older runs of lower
// priority wait; that the takeover's sweep requeued the victim's run, its
// lease expired; and, after every third round, that a checkpoint numbered
// one too far is a conflict, that an interrupt made at a version the
// holder's checkpoint has moved past is a conflict, that a holder whose
// run is interrupted under it, its lease not yet expired, can no longer
// renew, pass the fence or finish the run, that a decided interrupt cannot
// be decided again, and that an overdue interrupt times its run out.
//
// It runs in two modes:
//
//   - goroutines (RunGoroutines): worker goroutines on an injected logical
//     clock; the fault pauses a victim worker at a gate while the clock
//     passes its lease, then lets another worker — or the victim's own
//     worker id, as a restarted process would use — take the run over.
//     Deterministic rounds, so each kind of takeover happens every run.
//   - processes (RunProcesses): worker processes re-executing the current
//     binary (see Role) on the wall clock, sharing the database
//     file; the fault is SIGSTOP for longer than the lease, then SIGCONT.
package leasestall
