package backends

import "github.com/storecheck/storecheck/backends/internal/tmpfs"

// MkdirTemp makes a scratch folder in parent ("" is the system's temporary
// folder) named prefix, this process's id and a random part, after removing
// that prefix's folders whose process is gone: what a run killed with
// SIGKILL left behind is removed by the next run that makes one.
func MkdirTemp(parent, prefix string) (string, error) {
	return tmpfs.MkdirTemp(parent, prefix)
}
