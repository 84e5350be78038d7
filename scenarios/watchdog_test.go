package scenarios

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// watchdogGrace is how long past its deadline a run may take to return.
const watchdogGrace = 30 * time.Second

// runWatched runs run with a context that ends after limit, and fails the
// test with the stacks of every goroutine when run has not returned
// watchdogGrace after that: a test against a real server must end in a
// verdict and say where it waited, not in the package's -timeout with
// nothing said.
func runWatched(t *testing.T, limit time.Duration, run func(ctx context.Context) Result) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- run(ctx) }()
	timer := time.NewTimer(limit + watchdogGrace)
	defer timer.Stop()
	select {
	case res := <-done:
		return res
	case <-timer.C:
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		if spin := spinningServers(); spin != "" {
			// A server this process started spins while storecheck's calls
			// into it (cgo, no context) wait: seen with sqld 0.24.32 during
			// the replica-lag sweep, in CI and by hand, not yet triaged.
			// Not a verdict on the server, not a PASS: NOT RUN, with the
			// evidence, and the server killed so that nothing spins on.
			t.Logf("goroutines:\n%s", stacks.String())
			t.Skipf("NOT RUN: the run had not returned %v after its %v deadline while %s; killed (a wedged server, not yet triaged: docs/KNOWN-ISSUES.md)",
				watchdogGrace, limit, spin)
		}
		t.Fatalf("the run had not returned %v after its %v deadline: something it waits on ignores the context; goroutines:\n%s",
			watchdogGrace, limit, stacks.String())
		return Result{}
	}
}

// spinningServers finds the sqld processes this process started that are
// burning CPU (over half a core across two seconds), kills them, and
// describes them; "" when there is none.
func spinningServers() string {
	cpu := func(pid string) (float64, string, bool) {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			return 0, "", false
		}
		// pid (comm) state ppid … utime(14) stime(15), after the comm.
		text := string(b)
		end := strings.LastIndexByte(text, ')')
		if end < 0 {
			return 0, "", false
		}
		comm := text[strings.IndexByte(text, '(')+1 : end]
		f := strings.Fields(text[end+2:])
		if len(f) < 13 || f[1] != strconv.Itoa(os.Getpid()) || !strings.Contains(comm, "sqld") {
			return 0, "", false
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		return (u + s) / 100, comm, true // clock ticks, 100 a second
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	before := map[string]float64{}
	for _, p := range procs {
		if c, _, ok := cpu(filepath.Base(p)); ok {
			before[filepath.Base(p)] = c
		}
	}
	if len(before) == 0 {
		return ""
	}
	time.Sleep(2 * time.Second)
	var found []string
	for pid, c0 := range before {
		c1, comm, ok := cpu(pid)
		if !ok || c1-c0 < 1 {
			continue
		}
		found = append(found, fmt.Sprintf("%s (pid %s) used %.1f s of CPU in 2 s", comm, pid, c1-c0))
		if n, err := strconv.Atoi(pid); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
	return strings.Join(found, "; ")
}

func TestRunWatchedReturnsTheResult(t *testing.T) {
	res := runWatched(t, time.Minute, func(ctx context.Context) Result {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the run was given no deadline")
		}
		return Result{Reason: "done"}
	})
	if res.Reason != "done" {
		t.Errorf("result %+v", res)
	}
}

// TestSpinningServersFindsAndKills: a child named like sqld that burns a
// core is found and killed; one that sleeps is left alone.
func TestSpinningServersFindsAndKills(t *testing.T) {
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Skipf("NOT RUN: no /bin/sh: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "sqld-spin")
	if err := os.WriteFile(bin, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	spin := exec.Command(bin, "-c", "while :; do :; done")
	idle := exec.Command(bin, "-c", "sleep 30")
	for _, c := range []*exec.Cmd{spin, idle} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = idle.Process.Kill(); _ = idle.Wait() })
	got := spinningServers()
	if !strings.Contains(got, "sqld-spin (pid "+strconv.Itoa(spin.Process.Pid)+")") || strings.Contains(got, strconv.Itoa(idle.Process.Pid)) {
		t.Errorf("found %q", got)
	}
	if err := spin.Wait(); err == nil {
		t.Errorf("the spinning child was not killed")
	}
}
