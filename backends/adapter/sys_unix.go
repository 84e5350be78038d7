//go:build unix && !linux

package adapter

import "syscall"

// sysProcAttr puts the adapter in its own process group, so that a signal
// reaches everything it started. Without Pdeathsig, an adapter outlives a
// killed harness until it reads the end of its input.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
