package lossyfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A process killed while it serves a lossy file system (SIGKILL, a crash)
// leaves its mount behind, and, if one of its own threads was in a
// request to it, a zombie that cannot be reaped: the request waits for an
// answer nobody will give. Anything touching the mount's folder then hangs
// too (`rm -rf` of the run folder). Each mount names the process serving
// it in its source (lossyfs-PID), so that the next Mount removes the
// mounts of processes that are gone.

// fsType is a lossy file system's type in the mount table.
const fsType = "fuse.lossyfs"

// sourceOf is the mount source of a lossy file system process pid serves.
func sourceOf(pid int) string { return "lossyfs-" + strconv.Itoa(pid) }

// SweepDead removes (ForceUnmount) every lossy file system in this mount
// namespace whose serving process has exited, zombies included. Mounts of
// live processes, and those that do not name their process, are left.
func SweepDead() error {
	entries, err := mountTable()
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		pid, ok := strings.CutPrefix(e.source, "lossyfs-")
		if e.fsType != fsType || !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 || n == os.Getpid() || !exited(n) {
			continue
		}
		if err := ForceUnmount(e.point); err != nil {
			errs = append(errs, fmt.Errorf("lossyfs: remove the mount %s that process %d left when it died: %w", e.point, n, err))
		}
	}
	return errors.Join(errs...)
}

// exited says whether process pid has ended: it is gone, or a zombie
// (its threads may still wait on its own mount, but it serves nothing).
func exited(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// "PID (COMM) STATE …": COMM may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
