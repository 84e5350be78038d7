// Package pids answers whether a process id is in use, for the leftovers a
// run removes only once the run that made them is gone (tmpfs folders,
// network namespaces and firewall rules named after their run's process),
// and reads what /proc says of a process.
package pids

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
	st, err := Read(pid)
	return err != nil || (st.State != 'Z' && st.State != 'X') // without /proc, kill's word
}

// Stat is what /proc/PID/stat says of a process.
type Stat struct {
	Comm  string  // its command name
	State byte    // R running, S sleeping, T stopped, Z zombie, …
	PPID  int     // its parent's pid
	CPU   float64 // user and system CPU seconds used so far
}

// Read reads /proc/PID/stat (CPU times in clock ticks of 1/100 s, as Linux
// reports them).
func Read(pid int) (Stat, error) {
	return ReadStat("/proc/" + strconv.Itoa(pid) + "/stat")
}

// ReadStat reads a stat file of /proc: a process's, or one of its
// threads' (/proc/PID/task/TID/stat).
func ReadStat(path string) (Stat, error) {
	pid := strings.TrimSuffix(strings.TrimPrefix(path, "/proc/"), "/stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	// pid (comm) state ppid … utime(14) stime(15): the comm may hold
	// spaces and parentheses, so the fields are counted after its last ')'.
	text := string(b)
	open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 || end < open || end+2 > len(text) {
		return Stat{}, fmt.Errorf("unreadable /proc/%s/stat", pid)
	}
	f := strings.Fields(text[end+2:])
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("short /proc/%s/stat", pid)
	}
	ppid, err0 := strconv.Atoi(f[1])
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err0 != nil || err1 != nil || err2 != nil {
		return Stat{}, fmt.Errorf("unreadable fields in /proc/%s/stat", pid)
	}
	return Stat{Comm: text[open+1 : end], State: f[0][0], PPID: ppid, CPU: (u + st) / 100}, nil
}
