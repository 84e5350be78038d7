//go:build !linux

package sqld

import "syscall"

// procAttr puts sqld in a process group of its own.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
