package backends

import "github.com/storecheck/storecheck/backends/internal/tmpfs"

// MkdirTemp makes a scratch folder in parent ("" is the system's temporary
// folder) named prefix, this process's id and a random part, after removing
// that prefix's folders whose process is gone: what a run killed with
// SIGKILL left behind is removed by the next run that makes one.
func MkdirTemp(parent, prefix string) (string, error) {
	return tmpfs.MkdirTemp(parent, prefix)
}

// ScratchFolder is the parent folder for a run's throwaway files that no
// fault storecheck injects can tell from files on disk (process kills and
// pauses leave the page cache as it was; power loss is simulated only
// through a file system storecheck mounts itself): the TMPDIR the user set;
// else a tmpfs with room (/dev/shm on Linux); else the system's temporary
// folder (""). note says which, for a report.
func ScratchFolder() (dir, note string) {
	return tmpfs.Scratch()
}
