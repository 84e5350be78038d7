package procfault

import "github.com/storecheck/storecheck/backends"

// CrashNeeds are what crash-recovery needs of a backend: processes that
// share a database file.
func CrashNeeds() []backends.Capability {
	return []backends.Capability{backends.ExecutionStore, backends.SharedFile}
}

// StallNeeds are what writer-stall needs of a backend: processes that share
// a database file and announce their held write lock from a commit hook.
func StallNeeds() []backends.Capability {
	return []backends.Capability{backends.ExecutionStore, backends.SharedFile, backends.CommitHooks}
}

// PowerNeeds are what power-loss needs of a backend: a database file that
// worker processes open, under an execution store or a run store.
func PowerNeeds() []backends.Capability {
	return []backends.Capability{backends.SharedFile}
}
