package procfault

// CrashApplies reports whether crash-recovery can run against a backend
// URL, and if not, why.
func CrashApplies(rawURL string) (bool, string) {
	if _, ok := filePath(rawURL); !ok {
		return false, "crash-recovery kills processes that share a database file: it needs sqlite:FILE, libsql:FILE or mutant:NAME?path=FILE"
	}
	return true, ""
}

// StallApplies reports whether writer-stall can run against a backend URL,
// and if not, why.
func StallApplies(rawURL string) (bool, string) {
	if _, ok := filePath(rawURL); !ok || !hookable(rawURL) {
		return false, "writer-stall stops a process holding the write lock of a shared database file, announced from sqlstore's BeforeCommit hook: it needs sqlite:FILE or libsql:FILE"
	}
	return true, ""
}
