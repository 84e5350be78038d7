package lossyfs

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What SQLite needs of the kernel through the mount: POSIX advisory locks
// that exclude across processes, shared mmap, and several processes on one
// WAL database.

func TestPOSIXLocksExcludeAcrossProcesses(t *testing.T) {
	_, mp, _ := mountForTest(t, Options{})
	path := filepath.Join(mp, "locked")
	writeFile(t, path, "x", false)
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 1}
	if err := syscall.FcntlFlock(fh.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatalf("lock: %v", err)
	}
	w := startWorker(t, workerConfig{Job: "lock", Path: path})
	if got := strings.Join(w.lines, "\n"); !strings.Contains(got, "lock: resource temporarily unavailable") {
		t.Errorf("a second process locking a locked byte: %q, want EAGAIN", got)
	}
	lk.Type = syscall.F_UNLCK
	if err := syscall.FcntlFlock(fh.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	w = startWorker(t, workerConfig{Job: "lock", Path: path})
	if got := strings.Join(w.lines, "\n"); !strings.Contains(got, "lock: acquired") {
		t.Errorf("a second process locking an unlocked byte: %q", got)
	}
}

// Another process writes through a shared mapping and fsyncs: the write
// is durable. (Not in this process, which serves the mount: see the
// package documentation.)
func TestSharedMmapWritesAreSynced(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	path := filepath.Join(mp, "mapped")
	durableFile(t, path, strings.Repeat("\x00", pageSize))
	startWorker(t, workerConfig{Job: "mmap", Path: path}).kill()
	expect(t, "read before cut", readFile(t, path)[:20], "through the mapping\x00")
	cut(t, f)
	expect(t, "read after cut", readFile(t, path)[:20], "through the mapping\x00")
}

// Two processes commit to one WAL database at once, sharing its -shm
// mapping and its locks; every commit survives the cut.
func TestSQLiteTwoProcessesOneDatabase(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	path := filepath.Join(mp, "shared.sqlite")
	// Create the database first, so that the two do not race to make it.
	startWorker(t, workerConfig{Job: "sqlite", Path: path, Phases: []phase{{"FULL", 0}}}).kill()
	const each = 30
	a := launchWorker(t, workerConfig{Job: "sqlite", Path: path, Phases: []phase{{"FULL", each}}, First: 0})
	b := launchWorker(t, workerConfig{Job: "sqlite", Path: path, Phases: []phase{{"FULL", each}}, First: each})
	a.waitDone(t)
	b.waitDone(t)
	a.kill()
	b.kill()
	cut(t, f)
	if got := countRows(t, path, ""); got != 2*each {
		t.Errorf("after the cut: %d rows, want %d", got, 2*each)
	}
}

// In the serving process itself, SQLite works in WAL mode with
// locking_mode=EXCLUSIVE, which keeps the WAL index off the mount. It runs
// in a worker, with a watchdog that unwedges it should it hang.
func TestSQLiteInTheServingProcessWithExclusiveLocking(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	dir, mp, _ := tempDirs(t)
	t.Cleanup(func() { ForceUnmount(mp) })
	w := launchWorker(t, workerConfig{Job: "inprocess", Path: dir})
	watchdog := time.AfterFunc(30*time.Second, func() {
		ForceUnmount(mp)
		w.cmd.Process.Kill()
	})
	w.waitDone(t)
	watchdog.Stop()
	w.kill()
	var c checked
	for _, line := range w.lines {
		if rest, ok := strings.CutPrefix(line, "checked "); ok {
			if err := json.Unmarshal([]byte(rest), &c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c.Integrity != "ok" || c.Rows != 20 {
		t.Errorf("after the cut: %+v, want integrity ok and 20 rows", c)
	}
}
