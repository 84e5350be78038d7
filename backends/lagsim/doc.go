// Package lagsim simulates libSQL embedded replicas on machines without
// sqld: a real SQLite primary (package sqlite, the seed's SQL) and, per
// client, a replica in memory that is refreshed from the primary on a seeded
// schedule. It is a simulation of replica lag, not libSQL: reports call it
// so.
//
// Opening by URL: lagsim:PATH?lag=D, where PATH is the primary's file and D
// the mean time between two refreshes of a replica (0: refresh before every
// read). Further parameters: jitter=F (each wait is D·[1−F, 1+F], default
// 0.5), read_your_writes=BOOL (default true, as in go-libsql), seed=N (the
// jitter's seed when the URL is opened on its own; a scenario passes its
// run's seed), and mutant=cas-on-replica (see below).
//
// # The replica
//
// Every client gets a replica of its own: an in-memory SQLite database on
// one connection. A refresh reads the primary's pages in one read
// transaction (sqlite3_serialize, on read-only connections the cluster
// keeps open) and makes them the replica's database (sqlite3_deserialize),
// with the header's two format bytes turned from WAL to rollback journal,
// the only bytes the journal mode touches (copy.go). A reader of the
// replica sees the old snapshot or the new one, never a mix: reads and
// refreshes take the one connection in turn (copy_test.go checks this under
// concurrent writers). Nothing of a replica is written to disk.
//
// Loads, load_for_event and every other read come from the replica; every
// write goes to the primary, in one transaction, where the version
// compare-and-swap is decided, as the seed says a correct store must do:
// "read from the primary for the CAS". A client that loaded a stale version
// gets a StoreConflict whose Found is the primary's version.
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
// # The mutant
//
// mutant=cas-on-replica decides the compare-and-swap on the replica: it
// reads the version from the replica and then writes the primary's row
// unconditionally. Two clients that loaded the same stale version both
// win: a lost update, which the replica-lag-conflict scenario must catch.
package lagsim
