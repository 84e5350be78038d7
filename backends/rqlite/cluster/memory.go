package cluster

import (
	"fmt"
	"syscall"
)

// Nodes' data in memory. rqlited syncs its Raft log to disk on every
// commit, and on this project's machines a sync costs milliseconds: most
// of a conformance run against processes is waiting for the disk. The
// faults storecheck injects into rqlite are process kills, pauses and cut
// links, never a lost page cache, so a node killed with its data on a
// tmpfs comes back with exactly what it would find on a disk; what changes
// is that commits stop waiting for the disk (and for other runs' use of
// it), which is noise in what a run measures, not part of the store.

// memoryFolder is where a tmpfs is mounted on Linux.
const memoryFolder = "/dev/shm"

// tmpfsMagic is the file system type statfs reports for a tmpfs.
const tmpfsMagic = 0x01021994

// minMemoryFree is the room a cluster's data may need (three nodes'
// Raft logs and snapshots of a run, with a wide margin): a smaller tmpfs
// (a container's 64 MiB /dev/shm) is not used.
const minMemoryFree = 1 << 30

// MemoryFolder returns a folder on a tmpfs to keep nodes' data in, or why
// there is none.
func MemoryFolder() (string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(memoryFolder, &st); err != nil {
		return "", fmt.Errorf("no memory folder: %w", err)
	}
	if int64(st.Type) != tmpfsMagic {
		return "", fmt.Errorf("no memory folder: %s is not a tmpfs", memoryFolder)
	}
	if free := st.Bavail * uint64(st.Bsize); free < minMemoryFree {
		return "", fmt.Errorf("no memory folder: %s has %d MiB free, want %d MiB", memoryFolder, free>>20, minMemoryFree>>20)
	}
	if err := syscall.Access(memoryFolder, 2 /* W_OK */); err != nil {
		return "", fmt.Errorf("no memory folder: %s is not writable: %w", memoryFolder, err)
	}
	return memoryFolder, nil
}
