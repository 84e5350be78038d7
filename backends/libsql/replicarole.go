package libsql

// ReplicaSyncRole is the worker role of a replica client in a process of
// its own (ReplicaSyncWorker).
const ReplicaSyncRole = "libsql-replica-sync"
