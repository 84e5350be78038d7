// Package pids answers whether a process id is in use, for the leftovers a
// run removes only once the run that made them is gone (tmpfs folders,
// network namespaces and firewall rules named after their run's process).
package pids

import (
	"errors"
	"syscall"
)

// Alive reports whether a process pid exists. EPERM means it does, as
// another user's.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
