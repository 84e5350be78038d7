package procfault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/chaos/lossyfs"
	"github.com/storecheck/storecheck/model/runstore"
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

// The run store under power loss: FULL keeps every acknowledged write,
// NORMAL loses a suffix, and the run store that says FULL and runs OFF is
// caught as a durability break.
func TestPowerLossRunStore(t *testing.T) {
	full := power(t, "runs+sqlite:{dir}/r.db?synchronous=full", 1, 4)
	if full.Err != nil || full.Lost != 0 || full.Acked == 0 {
		t.Errorf("FULL: err %v, %d of %d acknowledged writes lost", full.Err, full.Lost, full.Acked)
	}
	normal := power(t, "runs+sqlite:{dir}/r.db", 2, 4)
	if normal.Err != nil || normal.Lost == 0 {
		t.Errorf("NORMAL: err %v, %d of %d acknowledged writes lost; a cut between checkpoints must lose some", normal.Err, normal.Lost, normal.Acked)
	}
	broken := power(t, "runs+mutant:unsynced-full?path={dir}/r.db", 1, 4)
	if !errors.Is(broken.Err, ErrDurability) || broken.Synchronous != "FULL" {
		t.Errorf("runs+mutant:unsynced-full judged as %s: err %v; want a durability break", broken.Synchronous, broken.Err)
	}
	t.Log(broken.Err)
}

// TestRunsLossRules: the run-store ledger accepts a lost suffix under
// NORMAL only, and never a hole.
func TestRunsLossRules(t *testing.T) {
	ctx := context.Background()
	create := runsOp{Kind: opCreate, Run: "r1", Name: "c0-1", NowMS: 1}
	ev2 := runsOp{Kind: opEvent, Run: "r1", Name: "c0-2", NowMS: 2}
	ev3 := runsOp{Kind: opEvent, Run: "r1", Name: "c0-3", NowMS: 3}
	dump := func(ops ...runsOp) *runstore.Dump {
		d, err := replay(ctx, ops)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name string
		rule lossRule
		got  *runstore.Dump
		lost int
		want error
	}{
		{"full keeps all", keepAll, dump(create, ev2, ev3), 0, nil},
		{"full loses a suffix", keepAll, dump(create, ev2), 0, ErrDurability},
		{"normal loses a suffix", keepPrefix, dump(create, ev2), 1, nil},
		{"normal loses a middle write", keepPrefix, dump(create, ev3), 0, ErrDurability},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &runsLedger{}
			for i, op := range []runsOp{create, ev2, ev3} {
				l.observe(message{Type: msgBegin, N: i + 1, RunsOp: &op})
				l.observe(message{Type: msgAck, N: i + 1})
			}
			found, err := l.verify(ctx, c.rule, "ok", c.got)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			if err == nil && found.Lost != c.lost {
				t.Errorf("lost %d, want %d", found.Lost, c.lost)
			}
		})
	}
}

// TestPowerLossKeepsTheDisksOfAFailedRun: a run that breaks a guarantee
// keeps the disk as its last two cuts left it (the evidence a recovery is
// read from); a passing one keeps none.
func TestPowerLossKeepsTheDisksOfAFailedRun(t *testing.T) {
	if err := lossyfs.Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	for _, c := range []struct {
		url  string
		fail bool
	}{
		{"mutant:unsynced-full?path={dir}/m.db", true},
		{"sqlite:{dir}/s.db?synchronous=full", false},
	} {
		t.Run(c.url[:strings.IndexByte(c.url, ':')], func(t *testing.T) {
			disks := filepath.Join(t.TempDir(), "disks")
			url := strings.ReplaceAll(c.url, "{dir}", t.TempDir())
			res, err := PowerLoss(context.Background(), PowerOptions{URL: url, Seed: 1, Cycles: 3, Command: selfCommand(t), Dir: t.TempDir(), Disks: disks})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Err != nil) != c.fail {
				t.Fatalf("verdict %v, want a failure: %v", res.Err, c.fail)
			}
			entries, _ := os.ReadDir(disks)
			if !c.fail {
				if len(entries) > 0 {
					t.Fatalf("a passing run kept %d disk images", len(entries))
				}
				return
			}
			last := fmt.Sprintf("cut-%d", len(res.Cuts))
			db := filepath.Join(disks, last, filepath.Base(strings.Split(url, "?path=")[1]))
			if _, err := os.Stat(db); err != nil || len(entries) == 0 || len(entries) > 2 {
				t.Fatalf("kept %d images, want the last one or two with the database (%v)", len(entries), err)
			}
		})
	}
}
