// Package pids answers whether a process id is in use, for the leftovers a
// run removes only once the run that made them is gone (tmpfs folders,
// network namespaces and firewall rules named after their run's process).
package pids

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Alive reports whether a process pid exists and has not exited. EPERM
// means it exists, as another user's. A zombie (exited, not yet reaped:
// a run killed while a thread of it waited on its own FUSE mount stays one
// until that mount is removed) is not alive.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie says whether /proc shows pid as exited ("Z" or "X"); without
// /proc it says no.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "PID (COMM) STATE …": COMM may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
