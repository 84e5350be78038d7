// Package lagsim simulates libSQL embedded replicas on machines without
// sqld: a real SQLite primary (package sqlite, the seed's SQL) and, per
// client, a replica: a snapshot of the primary, refreshed on a seeded
// schedule. It is a simulation of replica lag, not libSQL: reports call it
// so.
//
// Opening by URL: lagsim:PATH?lag=D, where PATH is the primary's file and D
// the mean time between two refreshes of a replica (0: refresh before every
// read). Further parameters: jitter=F (each wait is D·[1−F, 1+F], default
// 0.5), read_your_writes=BOOL (default true, as in go-libsql), seed=N (the
// jitter's seed when the URL is opened on its own; a scenario passes its
// run's seed), and mutant=NAME (cas-on-replica, torn-replica, short-sync
// and the hunt's, below).
//
// # The replica
//
// Every client gets a replica of its own: one read-only connection to the
// primary's file that holds a read transaction open. The primary is in WAL
// mode, where a read transaction sees the database as it was when it began,
// so the replica lags by exactly the time since its last refresh; a refresh
// ends the transaction and begins another (snapshot.go). A reader of the
// replica sees one snapshot, never a mix of two, and nothing newer than the
// last refresh (snapshot_test.go checks both under concurrent writers).
// Nothing of a replica is written to disk; what it costs is on the
// primary's WAL, which cannot be checkpointed past the oldest snapshot a
// replica holds and so grows while replicas lag (docs/PERFORMANCE.md).
//
// Loads, load_for_event and every other read come from the replica; every
// write goes to the primary, in one transaction, where the version
// compare-and-swap is decided, as the seed says a correct store must do:
// "read from the primary for the CAS". A client that loaded a stale version
// gets a StoreConflict whose Found is the primary's version.
//
// # Replication positions
//
// The primary's file counts its changes: a table of the simulation's own
// holds a counter that triggers on the six tables raise with every row
// changed, in the changing transaction (position.go). A replica's position
// is the counter in the snapshot it holds, read as the snapshot is taken,
// and its tables are the snapshot's: the cluster is a replica.Positioner,
// so the replica-lag-conflict scenario's convergence check compares each
// replica with the primary after the heal, as on real embedded replicas.
//
// # Faults (simulated)
//
// Cluster.StopPrimary and StartPrimary make the primary unreachable for a
// window (a killed and restarted sqld: writes fail as not applied, refreshes
// fail, reads go on from the replicas; nothing committed is lost, since the
// primary's file is durable). Cluster.Cut and Heal do the same for one
// client's link only. Stalling a replica's refreshes is the replica's own
// StallSyncs.
//
// # The mutants
//
// mutant=cas-on-replica decides the compare-and-swap on the replica: it
// reads the version from the replica and then writes the primary's row
// unconditionally. Two clients that loaded the same stale version both
// win: a lost update, which the replica-lag-conflict scenario must catch.
//
// mutant=torn-replica applies other clients' commits to the replica in two
// steps with reads in between (torn.go): its executions and dedupe ledger
// are one refresh ahead of its outbox, spawns, timers and trace, while its
// own writes are always read back whole. Each read on its own is a
// committed, monotonic state, so during the traffic only the prefix rules
// of package linearizability (a replica's reads of every table must be
// states of one growing prefix of the commits) catch it; after the heal,
// the convergence check finds its side tables behind the primary's.
//
// mutant=short-sync reports success from a sync that stops at the primary's
// state of the replica's previous sync (short.go); its own writes it
// reads. Its reads look like more lag; after the heal its rows and its
// position are behind the primary's, which the heal's loads and the
// convergence check catch. mutant=position-ahead is short-sync reporting the
// position its sync saw at the primary.
//
// The third blind hunt's mutants (hunt.go; docs/DETECTION.md, "A third
// blind hunt: replica reads") each break one clause of what a replica read
// may return: rewind-on-reconnect, flip-flop, lag-beyond-bound (which the
// contract allows: it bounds no staleness), ryw-commits-only, ryw-early,
// lost-frames, reorder-emits, sharded-apply, keeps-deleted, mixed-source
// and mid-txn-stop.
package lagsim
