package sqld

import "syscall"

// procAttr puts sqld in a process group of its own (no terminal signals
// meant for the harness) and kills it if the harness dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
