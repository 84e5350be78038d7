package libsql

import "github.com/storecheck/storecheck/backends/replica"

// ReplicaSyncRole is the worker role of a replica client in a process of
// its own (ReplicaSyncWorker).
const ReplicaSyncRole = "libsql-replica-sync"

// ReopenedReplica is a replica client reopened on the file of a killed
// process.
type ReopenedReplica struct {
	*replica.Store
	// Integrity is what the file's own integrity check said ("ok").
	Integrity string
	// Killed is the position the dead process last reported; Resumed the
	// position the reopened replica's first sync reached; Comparable is
	// false when the primary restarted in between (a new replication log
	// numbers its frames afresh).
	Killed, Resumed int64
	Comparable      bool
}
