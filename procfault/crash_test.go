package procfault

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends"
)

func selfCommand(t *testing.T) Command {
	t.Helper()
	c, err := SelfCommand()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// crash runs crash-recovery on a fresh file of scheme, skipping when the
// backend cannot run here (libsql without cgo).
func crash(t *testing.T, scheme string, seed uint64, cycles int) *CrashResult {
	t.Helper()
	url := scheme + filepath.Join(t.TempDir(), "c.db")
	res, err := CrashRecovery(context.Background(), CrashOptions{URL: url, Seed: seed, Cycles: cycles, Command: selfCommand(t)})
	if errors.Is(err, ErrNotRun) && strings.Contains(err.Error(), "without cgo") {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range res.Cycle {
		t.Log(line)
	}
	return res
}

// Both embedded backends keep every acknowledged commit and never show part
// of one across SIGKILLs, with the synchronous setting they ship with.
// Seed 1 aims two of the eight kills at a commit held in its BeforeCommit
// hook, so at least two land mid-commit.
func TestCrashRecoveryEmbedded(t *testing.T) {
	for _, scheme := range []string{"sqlite:", "libsql:"} {
		t.Run(strings.TrimSuffix(scheme, ":"), func(t *testing.T) {
			res := crash(t, scheme, 1, 8)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Cycles != 8 || !res.Hooks || res.MidCommit < 2 || res.Acked == 0 {
				t.Errorf("want 8 cycles, the hook, at least 2 kills mid-commit and acknowledged commits; got %+v", res)
			}
			t.Logf("%s: %d cycles, %d kills in flight, %d mid-commit, %d applied, %d commits acknowledged, commit %v",
				scheme, res.Cycles, res.InFlight, res.MidCommit, res.Applied, res.Acked, res.CommitLatency)
		})
	}
}

// The mutant that commits the execution row and its side-writes in two
// transactions is caught: a kill between them leaves the row without its
// emits. It has no BeforeCommit hook, so every kill is aimed anywhere in a
// commit; about half land between the two transactions.
func TestCrashRecoveryCatchesSplitCommit(t *testing.T) {
	// The window between the two transactions is microseconds wide: on a
	// loaded machine a default run's 20 kills can all miss it (seen once,
	// seed 3). 80 cycles bound the test; the run stops at the catch.
	res := crash(t, "mutant:split-commit?path=", 1, 80)
	if !errors.Is(res.Err, ErrAtomicity) {
		t.Fatalf("split-commit survived %d cycles (want an atomicity violation): %v", res.Cycles, res.Err)
	}
	if res.Hooks {
		t.Errorf("a mutant reported the BeforeCommit hook")
	}
	t.Logf("caught after %d cycles: %v", res.Cycles, res.Err)
}

// The mutant that serves every call from a working copy and saves it to
// its file every 100 ms is caught: a kill loses the commits acknowledged
// since the last snapshot. It passes conformance and concurrent.
func TestCrashRecoveryCatchesPeriodicSnapshot(t *testing.T) {
	res := crash(t, "mutant:periodic-snapshot?path=", 1, 5)
	if !errors.Is(res.Err, ErrDurability) {
		t.Fatalf("periodic-snapshot survived %d cycles (want a durability violation): %v", res.Cycles, res.Err)
	}
	t.Logf("caught after %d cycles: %v", res.Cycles, res.Err)
}

// A mutant whose one bug no crash shows (guarded-upsert: a stale commit of
// the stored bytes), run through the same mutant: URL path, passes: what
// catches split-commit is its bug, not the path.
func TestCrashRecoveryPassesGuardedUpsert(t *testing.T) {
	if res := crash(t, "mutant:guarded-upsert?path=", 2, 6); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestCrashRecoveryRefusesWhatItCannotCrash(t *testing.T) {
	for _, url := range []string{"memory:", "sqlite::memory:", "mutant:split-commit", "rqlite://127.0.0.1:4001"} {
		if bt, err := backends.Resolve(url); err != nil || !lacks(bt, CrashNeeds()) {
			t.Errorf("%s: crash-recovery applies (%v)", url, err)
		}
		if _, err := CrashRecovery(context.Background(), CrashOptions{URL: url}); !errors.Is(err, ErrNotRun) {
			t.Errorf("%s: want ErrNotRun, got %v", url, err)
		}
	}
}

// A program that does not act as a worker (here true(1); a test binary
// without worker.Main in its TestMain behaves alike) makes the run NOT RUN,
// saying why.
func TestCrashRecoveryWithoutAWorker(t *testing.T) {
	path, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	url := "sqlite:" + filepath.Join(t.TempDir(), "c.db")
	_, err = CrashRecovery(context.Background(), CrashOptions{URL: url, Seed: 1, Cycles: 1, Command: Command{Path: path}})
	if !errors.Is(err, ErrNotRun) || !strings.Contains(err.Error(), "worker.Main") {
		t.Fatalf("want NOT RUN naming worker.Main, got %v", err)
	}
}

// lacks reports whether t lacks some of needs, with a reason.
func lacks(t *backends.Target, needs []backends.Capability) bool {
	missing, why := t.Lacks(needs)
	return len(missing) > 0 && why != ""
}
