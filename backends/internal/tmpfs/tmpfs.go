// Package tmpfs finds a folder in memory for files a run makes that are
// not the store under test, and whose trip to the disk is only cost: the
// data of rqlite nodes storecheck starts, go-libsql's replica files and
// sqld's data.
package tmpfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/storecheck/storecheck/backends/internal/pids"
)

// Files in memory are only for what no fault storecheck injects could
// tell from files on disk: process kills, pauses and cut links leave the
// page cache as it was, so a process killed with its files on a tmpfs
// finds what it would find on a disk. Power loss is simulated only on
// embedded stores' files, through a file system storecheck mounts itself
// (chaos/lossyfs), never on these.

// folder is where a tmpfs is mounted on Linux.
const folder = "/dev/shm"

// tmpfsMagic is the file system type statfs reports for a tmpfs.
const tmpfsMagic = 0x01021994

// minFree is the room a run's files there may need (three rqlite nodes'
// Raft logs and snapshots, or eight replica files, with a wide margin): a
// smaller tmpfs (a container's 64 MiB /dev/shm) is not used.
const minFree = 1 << 30

// Folder returns a folder on a tmpfs with room, or why there is none.
func Folder() (string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(folder, &st); err != nil {
		return "", fmt.Errorf("no memory folder: %w", err)
	}
	if int64(st.Type) != tmpfsMagic {
		return "", fmt.Errorf("no memory folder: %s is not a tmpfs", folder)
	}
	if free := st.Bavail * uint64(st.Bsize); free < minFree {
		return "", fmt.Errorf("no memory folder: %s has %d MiB free, want %d MiB", folder, free>>20, minFree>>20)
	}
	if err := syscall.Access(folder, 2 /* W_OK */); err != nil {
		return "", fmt.Errorf("no memory folder: %s is not writable: %w", folder, err)
	}
	return folder, nil
}

// MkdirTemp makes a new folder in parent ("" is the system's temporary
// folder) named prefix, this process's id and a random part, after
// removing the folders of that prefix there whose process is gone: a run
// killed before it could clean up (SIGKILL, a crash) leaves its folder
// behind, and on a tmpfs that folder holds memory until the next boot.
// Folders of processes still running are left alone.
func MkdirTemp(parent, prefix string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	removeStale(parent, prefix)
	return os.MkdirTemp(parent, prefix+strconv.Itoa(os.Getpid())+"-*")
}

// removeStale removes parent's folders prefix+PID-… whose process is gone.
func removeStale(parent, prefix string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || pids.Alive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}
