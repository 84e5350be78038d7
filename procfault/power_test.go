package procfault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/chaos/lossyfs"
)

// power runs power-loss on url (with {dir} replaced by a fresh folder),
// reporting NOT RUN where FUSE or cgo is missing.
func power(t *testing.T, url string, seed uint64, cycles int) *PowerResult {
	t.Helper()
	if err := lossyfs.Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	url = strings.ReplaceAll(url, "{dir}", t.TempDir())
	res, err := PowerLoss(context.Background(), PowerOptions{URL: url, Seed: seed, Cycles: cycles, Command: selfCommand(t), Dir: t.TempDir()})
	if errors.Is(err, ErrNotRun) && strings.Contains(err.Error(), "without cgo") {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range res.Cycle {
		if i < len(res.Cuts) {
			c := res.Cuts[i]
			line += fmt.Sprintf("; cut: %d files with unsynced data, %d entry changes, %d acknowledged commits lost", c.Files, c.EntryChanges, c.Lost)
		}
		t.Log(line)
	}
	t.Logf("syncs: %v", res.Syncs)
	return res
}

// Under FULL and EXTRA, in WAL mode, every acknowledged commit survives
// every power cut, on both embedded backends.
func TestPowerLossFullKeepsEveryCommit(t *testing.T) {
	for _, url := range []string{"sqlite:{dir}/p.db?synchronous=full", "libsql:{dir}/p.db?synchronous=extra"} {
		t.Run(url[:strings.IndexByte(url, ':')], func(t *testing.T) {
			res := power(t, url, 1, 4)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if len(res.Cuts) != 4 || res.Lost != 0 || res.Acked == 0 || res.Syncs[lossyfs.Fsync] == 0 {
				t.Errorf("want 4 cuts, nothing lost, commits acknowledged and fsyncs seen; got %d cuts, %d lost, %d acked, syncs %v",
					len(res.Cuts), res.Lost, res.Acked, res.Syncs)
			}
		})
	}
}

// NORMAL syncs the WAL only at checkpoints: cuts lose the last commits,
// and the check accepts that only as a suffix, each commit whole.
func TestPowerLossNormalLosesASuffix(t *testing.T) {
	res := power(t, "sqlite:{dir}/p.db", 2, 4)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Synchronous != "NORMAL" || res.Lost == 0 {
		t.Errorf("NORMAL lost %d acknowledged commits over %d cuts; a cut between checkpoints must lose some", res.Lost, len(res.Cuts))
	}
}

// A store that says FULL and runs OFF is caught at the first cut after an
// acknowledged commit: a durability break.
func TestPowerLossCatchesUnsyncedFull(t *testing.T) {
	res := power(t, "mutant:unsynced-full?path={dir}/p.db", 1, 4)
	if !errors.Is(res.Err, ErrDurability) || res.Synchronous != "FULL" {
		t.Fatalf("judged as %s: err %v; want a durability break", res.Synchronous, res.Err)
	}
	t.Log(res.Err)
}

// The same store judged by what OFF promises (nothing) passes, and the run
// says what the cuts lost.
func TestPowerLossOffReportsOnly(t *testing.T) {
	res := power(t, "sqlite:{dir}/p.db?synchronous=off", 1, 3)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Lost == 0 && res.Unexplained == 0 {
		t.Errorf("OFF lost nothing over %d cuts", len(res.Cuts))
	}
}

// TestPowerLossLeavesNothingMounted: after a passing, a failing and an
// interrupted run, nothing is mounted under the run's folder and the
// folder it made is gone.
func TestPowerLossLeavesNothingMounted(t *testing.T) {
	if err := lossyfs.Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	for _, c := range []struct {
		name, url string
		interrupt bool // at the second power cut
	}{
		{"passing", "sqlite:{dir}/p.db?synchronous=full", false},
		{"failing", "mutant:unsynced-full?path={dir}/p.db", false},
		{"interrupted", "sqlite:{dir}/p.db", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dir := t.TempDir()
			url := strings.ReplaceAll(c.url, "{dir}", t.TempDir())
			opt := PowerOptions{URL: url, Seed: 1, Cycles: 4, Command: selfCommand(t), Dir: dir}
			if c.interrupt {
				opt.Fault = func(f string) {
					if strings.HasPrefix(f, "power cut 2/") {
						cancel()
					}
				}
			}
			_, err := PowerLoss(ctx, opt)
			if c.interrupt && !errors.Is(err, context.Canceled) {
				t.Errorf("interrupted run: err %v, want context.Canceled", err)
			}
			if !c.interrupt && err != nil {
				t.Fatal(err)
			}
			mounts, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(mounts), dir) {
				t.Errorf("still mounted under %s:\n%s", dir, mounts)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("left in %s: %v", dir, left)
			}
		})
	}
}
