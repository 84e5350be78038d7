package procfault

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/chaos/lossyfs"
)

// No worker outlives a run: after a passing run, a failing run and an
// interrupted one, this process has no child left (not even a zombie), and
// every worker it started is gone.

// pids records the workers a run starts.
type pids struct {
	mu   sync.Mutex
	list []int
	// then, when set, is called after each start with the count so far.
	then func(n int)
}

func (p *pids) command(t *testing.T) Command {
	c := selfCommand(t)
	c.OnStart = func(pid int) {
		p.mu.Lock()
		p.list = append(p.list, pid)
		n := len(p.list)
		p.mu.Unlock()
		if p.then != nil {
			p.then(n)
		}
	}
	return c
}

// assertNoWorkers fails unless every recorded worker is gone and this
// process has no child at all.
func (p *pids) assertNoWorkers(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.list) == 0 {
		t.Fatal("the run started no worker")
	}
	for _, pid := range p.list {
		if ppid, state, ok := procStat(pid); ok && ppid == os.Getpid() {
			t.Errorf("worker %d is still this process's child (state %s)", pid, state)
		}
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("children left after the run: %v", kids)
	}
}

// children lists this process's children from /proc, zombies included.
func children(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for children in: %v", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(pid); ok && ppid == os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/PID/stat.
func procStat(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], err == nil
}

func TestNoWorkerOutlivesPassingRuns(t *testing.T) {
	var p pids
	res, err := CrashRecovery(context.Background(), CrashOptions{URL: "sqlite:" + filepath.Join(t.TempDir(), "c.db"), Seed: 3, Cycles: 3, Command: p.command(t)})
	if err != nil || res.Err != nil {
		t.Fatalf("crash-recovery: %v, %v", err, res.Err)
	}
	p.assertNoWorkers(t)
}

// A failing run stops at its first broken guarantee, with a worker alive.
// The failure must be certain, not a kill's luck (split-commit's window
// between its two transactions is microseconds wide and a loaded machine
// can miss it twenty times): the power cut under unsynced-full loses an
// acknowledged commit every time. Without FUSE, split-commit it is, and a
// run it survives says so.
func TestNoWorkerOutlivesFailingRuns(t *testing.T) {
	var p pids
	if lossyfs.Available() == nil {
		res, err := PowerLoss(context.Background(), PowerOptions{URL: "mutant:unsynced-full?path=" + filepath.Join(t.TempDir(), "c.db"),
			Seed: 3, Cycles: 4, Command: p.command(t), Dir: t.TempDir()})
		if err != nil || !errors.Is(res.Err, ErrDurability) {
			t.Fatalf("unsynced-full: want a durability break, got %v, %+v", err, res)
		}
		p.assertNoWorkers(t)
		return
	}
	res, err := CrashRecovery(context.Background(), CrashOptions{URL: "mutant:split-commit?path=" + filepath.Join(t.TempDir(), "c.db"), Seed: 3, Command: p.command(t)})
	if err != nil {
		t.Fatal(err)
	}
	p.assertNoWorkers(t)
	if res.Err == nil {
		t.Skipf("NOT RUN: no FUSE here (%v), and split-commit survived %d kills this time: the failing path was not exercised", lossyfs.Available(), res.Cycles)
	}
}

func TestNoWorkerOutlivesInterruptedCrashRecovery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := pids{then: func(n int) {
		if n == 3 { // the third worker is committing soon: interrupt it mid-cycle
			time.AfterFunc(20*time.Millisecond, cancel)
		}
	}}
	_, err := CrashRecovery(ctx, CrashOptions{URL: "sqlite:" + filepath.Join(t.TempDir(), "c.db"), Seed: 3, Cycles: 50, Command: p.command(t)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the interruption, got %v", err)
	}
	p.assertNoWorkers(t)
}

func TestNoWorkerOutlivesInterruptedStall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var p pids
	stopped := false
	fault := func(f string) {
		if strings.HasPrefix(f, "SIGSTOP") { // interrupt while a worker is stopped
			stopped = true
			cancel()
		}
	}
	_, err := WriterStall(ctx, StallOptions{URL: "sqlite:" + filepath.Join(t.TempDir(), "s.db"), Seed: 3, Command: p.command(t), Fault: fault})
	if !errors.Is(err, context.Canceled) || !stopped {
		t.Fatalf("want the interruption during the stall, got %v (stopped: %v)", err, stopped)
	}
	p.assertNoWorkers(t)
}

// orphanEnv makes the test binary a parent that runs writer-stall, with
// workers meant to run for half a minute, in the folder it names, and writes
// each worker's pid to the file "pids" there, one per line (see TestMain),
// so that a test can SIGKILL that parent and watch its workers.
const orphanEnv = "PROCFAULT_TEST_ORPHAN_DIR"

// runOrphanParent is that parent. It runs until killed, or for a minute.
func runOrphanParent(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := SelfCommand()
	if err != nil {
		return 1
	}
	c.OnStart = func(pid int) {
		f, err := os.OpenFile(filepath.Join(dir, "pids"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err == nil {
			f.WriteString(strconv.Itoa(pid) + "\n")
			f.Close()
		}
	}
	_, _ = WriterStall(ctx, StallOptions{URL: "sqlite:" + filepath.Join(dir, "s.db"), Seed: 1, Duration: 30 * time.Second, Command: c})
	return 0
}

// Workers whose parent is SIGKILLed (no chance to clean up) die too, long
// before their traffic would have ended: Pdeathsig.
func TestWorkersDieWithTheirParent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	parent := exec.Command(exe, "-test.run=^$")
	parent.Env = append(os.Environ(), orphanEnv+"="+dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Wait()
	defer parent.Process.Kill()
	var workers []int
	for deadline := time.Now().Add(20 * time.Second); len(workers) < DefaultWorkers && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		workers = readPIDs(filepath.Join(dir, "pids"))
	}
	if len(workers) < DefaultWorkers {
		t.Fatalf("the parent started %d workers within 20 s, want %d", len(workers), DefaultWorkers)
	}
	time.Sleep(200 * time.Millisecond) // let them get going
	for _, pid := range workers {
		if _, state, ok := procStat(pid); !ok || state == "Z" {
			t.Fatalf("worker %d ended before its parent was killed", pid)
		}
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for _, pid := range workers {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, state, ok := procStat(pid); !ok || state == "Z" {
				break // gone, or dead and waiting for init to reap it
			}
			if time.Now().After(deadline) {
				t.Fatalf("worker %d still runs 5 s after its parent was killed", pid)
			}
		}
	}
}

// readPIDs returns the pids in the file, one per line.
func readPIDs(path string) []int {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, err := strconv.Atoi(sc.Text()); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}
