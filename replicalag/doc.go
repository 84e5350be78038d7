// Package replicalag measures what replica lag costs a store whose loads
// come from an embedded replica and whose commits are decided on the
// primary (docs/CONTRACT.md §1, property 10: stale-replica CAS decisions produce
// conflicts, never lost updates; the conflict rate as lag grows is
// measured, not guessed). It is the engine of storecheck's
// replica-lag-conflict scenario.
//
// A sweep runs the same seeded traffic once per lag level (by default 0,
// 10, 50, 200 and 1000 ms, up to the backend URL's lag, which is the top of
// the sweep), each on a fresh, empty cluster: one primary and one replica
// per client, each replica syncing on its own seeded schedule. Every
// client repeats the engine's step: load_for_event from its replica, build
// the next version, commit it on the primary, and on a conflict back off
// and start again, up to a bounded number of attempts. Then, with the lag
// at the top, a fault phase stalls a replica, cuts a client from the
// primary and kills and restarts the primary while the traffic goes on.
//
// Every level is recorded (package linearizability, with replica clients),
// healed (the primary read, every replica synced and read), and checked:
// commits are linearizable (porcupine over the commits and the primary's
// reads), no update is lost (the chain of winners), replica reads are
// committed, monotonic per replica and, with read-your-writes, include the
// replica's own writes, every replica read (the loads, and the outbox
// reads a client takes now and then between its load and its commit) is a
// state of one growing prefix of the commits, never part of a commit, and
// every replica converges after the heal. Per
// level it reports the conflict rate, the spurious-conflict rate (conflicts
// whose load had already missed an acknowledged version, so they could not
// have won), retries per commit, updates given up, and the worst staleness
// a load showed; as figures (Result.Metrics), as sweep.json and sweep.md in
// the run's folder, and as each level's history.
//
// The same seed gives the same schedule: which execution each update
// targets, every backoff's jitter, every replica's sync waits and the fault
// plan (Result.Digest proves it). Timing is the machine's, so the counts
// vary from run to run; the checks do not.
package replicalag
