package adapter

import "syscall"

// sysProcAttr puts the adapter in its own process group, so that a signal
// reaches everything it started, and has the kernel kill it if the harness
// dies. (Pdeathsig fires when the thread that started the child exits; the
// Go runtime only ends threads locked by a goroutine that exits, which this
// package never does.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
