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

	"github.com/storecheck/storecheck/backends/libsql/sqld"
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
			// the replica-lag sweep, in CI and by hand (sqld-write-lock-spin,
			// docs/KNOWN-ISSUES.md).
			// Not a verdict on the server, not a PASS: NOT RUN, with the
			// evidence, and the server killed so that nothing spins on.
			t.Logf("goroutines:\n%s", stacks.String())
			t.Skipf("NOT RUN: the run had not returned %v after its %v deadline while %s; killed (a wedged sqld: sqld-write-lock-spin in docs/KNOWN-ISSUES.md)",
				watchdogGrace, limit, spin)
		}
		t.Fatalf("the run had not returned %v after its %v deadline: something it waits on ignores the context; goroutines:\n%s",
			watchdogGrace, limit, stacks.String())
		return Result{}
	}
}

// sqldCPU is the CPU seconds used so far by each sqld process this
// process started, by pid, with its command name.
func sqldCPU() map[string]childCPU {
	out := map[string]childCPU{}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		st, err := sqld.ReadProcStat(pid)
		if err != nil || st.PPID != os.Getpid() || !strings.Contains(st.Comm, "sqld") {
			continue
		}
		out[filepath.Base(p)] = childCPU{comm: st.Comm, seconds: st.CPU}
	}
	return out
}

type childCPU struct {
	comm    string
	seconds float64
}

// spinningServers finds the sqld processes this process started that are
// burning CPU (over a quarter of a core across two seconds: a spinning
// server on a loaded machine gets less than a whole one, and a server a
// wedged run waits on has no work to do), kills them, and describes them;
// "" when there is none.
//
// A spinner on a machine loaded far past its cores (load 17–20 on two) may
// get less than that in one sample, so up to spinSamples are taken until
// one finds it: a run that wedged with no server spinning waits that much
// longer for its FAIL.
func spinningServers() string {
	const spinSamples = 5
	for range spinSamples {
		if found := spinningSample(); found != "" {
			return found
		}
	}
	return ""
}

// spinningSample is one 2 s sample of spinningServers.
func spinningSample() string {
	const spinCPU = 0.5 // CPU seconds in the 2 s sample
	before := sqldCPU()
	if len(before) == 0 {
		return ""
	}
	time.Sleep(2 * time.Second)
	var found []string
	for pid, c1 := range sqldCPU() {
		c0, ok := before[pid]
		if !ok || c1.seconds-c0.seconds < spinCPU {
			continue
		}
		found = append(found, fmt.Sprintf("%s (pid %s) used %.1f s of CPU in 2 s", c1.comm, pid, c1.seconds-c0.seconds))
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
	// The claim is the finding and the killing, not the machine's load:
	// beside make test's other packages on two cores a spinner at the
	// default priority got less than the quarter core the sampler looks
	// for (missed in 1 of 4 runs, docs/PERFORMANCE.md, 2026-12-04), so it
	// goes ahead of them where the test may raise its priority (root). A
	// real spinner missed under such load ends its run FAIL, not PASS.
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, spin.Process.Pid, -15); err != nil {
		t.Logf("the spinner keeps the default priority (%v): under heavy load the sampler may miss it", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- spin.Wait() }()
	// Whatever the test finds, neither child outlives it (a spinner it
	// missed would spin on, and a Wait on it would never return).
	t.Cleanup(func() {
		_ = spin.Process.Kill()
		<-exited
		_ = idle.Process.Kill()
		_ = idle.Wait()
	})
	got := spinningServers()
	if !strings.Contains(got, "sqld-spin (pid "+strconv.Itoa(spin.Process.Pid)+")") || strings.Contains(got, strconv.Itoa(idle.Process.Pid)) {
		t.Errorf("found %q", got)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("the spinning child exited by itself, not killed")
		}
		exited <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Errorf("the spinning child was not killed")
	}
}
