package scenarios

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/runmutants"
	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload/leasestall"
)

func TestRunStoreScenariosApplyOnlyToRunStores(t *testing.T) {
	for _, sc := range All() {
		runStore := sc.Name == "lease-stall" || sc.Name == "runs-conformance"
		if sc.Name == "power-loss" { // both contracts: a file under either
			for _, url := range []string{"runs+sqlite:/tmp/x.db", "sqlite:/tmp/x.db", "libsql:/tmp/x.db"} {
				if ok, why := sc.Applies(mustTarget(t, url).Target); !ok {
					t.Errorf("power-loss on %s: %s", url, why)
				}
			}
			for _, url := range []string{"memory:", "runs+memory:", "sqlite::memory:"} {
				if ok, _ := sc.Applies(mustTarget(t, url).Target); ok {
					t.Errorf("power-loss applies to %s, which has no file", url)
				}
			}
			continue
		}
		if len(sc.Needs) == 0 {
			t.Errorf("%s: needs nothing; it must refuse the other contract's URLs", sc.Name)
			continue
		}
		if ok, why := sc.Applies(mustTarget(t, "runs+sqlite:/tmp/x.db").Target); ok != runStore || (!ok && why == "") {
			t.Errorf("%s on a run-store URL: applies=%v (%q)", sc.Name, ok, why)
		}
		if runStore {
			if ok, why := sc.Applies(mustTarget(t, "sqlite:/tmp/x.db").Target); ok || why == "" {
				t.Errorf("%s on an execution-store URL: applies=%v (%q)", sc.Name, ok, why)
			}
		}
	}
}

func TestLeaseStallPassesOnSQLite(t *testing.T) {
	url := "runs+sqlite:" + filepath.Join(t.TempDir(), "runs.db")
	for _, name := range []string{"lease-stall", "runs-conformance"} {
		sc, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		target := mustTarget(t, url)
		res := runWatched(t, 3*time.Minute, func(ctx context.Context) Result {
			return sc.Run(ctx, target, Params{Seed: 5, Checks: 30, OutDir: t.TempDir()})
		})
		if res.Verdict != reports.Pass {
			t.Fatalf("%s: %s: %s", name, res.Verdict, res.Reason)
		}
		t.Logf("%s: %d ops, %v; %s", name, res.Ops, res.Metrics, res.Reason)
	}
}

// TestLeaseStallCatchesEveryMutant is the scenario-level proof that each
// run-store mutant is caught, naming the guarantee it breaks.
func TestLeaseStallCatchesEveryMutant(t *testing.T) {
	sc, err := Lookup("lease-stall")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"claim-keeps-token":       "fencing tokens strictly increase",
		"renew-expired":           "expired lease rejected",
		"finish-ignores-token":    "stale fencing token rejected",
		"two-active-per-session":  "one active run per session",
		"idempotency-key-nocase":  "idempotent create returns one run",
		"event-seq-global":        "table invariants",
		"claim-by-age":            "claim takes the highest-priority queued run",
		"requeue-deletes-lease":   "fencing tokens strictly increase",
		"interrupt-keeps-lease":   "an interrupt ends the holder's lease",
		"version-unchecked":       "a stale expected version is a conflict",
		"checkpoint-seq-gaps":     "checkpoints numbered without gaps",
		"requeue-grace":           "a sweep requeues every run whose lease expired",
		"interrupt-decided-twice": "an interrupt is decided once",
		"expiry-requeues-run":     "an overdue interrupt times its run out",
	}
	for _, m := range runmutants.Catalogue() {
		if m.PowerLossOnly() || m.ConformanceOnly() {
			continue // caught by power-loss only (procfault's tests), or by runs-conformance only
		}
		t.Run(m.Name, func(t *testing.T) {
			target := mustTarget(t, "runs+mutant:"+m.Name)
			res := runWatched(t, 3*time.Minute, func(ctx context.Context) Result { return sc.Run(ctx, target, Params{Seed: 5}) })
			if res.Verdict != reports.Fail {
				t.Fatalf("mutant survived: %s %s", res.Verdict, res.Reason)
			}
			if res.Guarantee != want[m.Name] || !strings.Contains(res.Reason, res.Guarantee) {
				t.Errorf("caught by %q (%s), want %q", res.Guarantee, res.Reason, want[m.Name])
			}
		})
	}
}

// A lease-stall mode that stalled no worker says so; a run in which no
// mode stalled one tried nothing of what the scenario is for and is NOT
// RUN, never PASS; a violation still FAILs.
func TestLeaseStallWithoutStalls(t *testing.T) {
	mode := func(name string, stalls int) *leasestall.Result {
		return &leasestall.Result{Mode: name, Counts: leasestall.Counts{Ops: 10, Stalls: stalls}, Report: &leases.Report{}}
	}
	res := leaseStallResult(Params{}, []*leasestall.Result{mode("goroutines", 9), mode("processes", 0)}, nil)
	if res.Verdict != reports.Pass || !strings.Contains(res.Reason, "processes mode stalled no worker") {
		t.Errorf("one mode without stalls: %s %q; want PASS naming it", res.Verdict, res.Reason)
	}
	res = leaseStallResult(Params{}, []*leasestall.Result{mode("goroutines", 0)}, []string{"process mode not run: no file"})
	if res.Verdict != reports.NotRun || !strings.Contains(res.Reason, "goroutines mode stalled no worker") || !strings.Contains(res.Reason, "no file") {
		t.Errorf("no stall at all: %s %q; want NOT RUN naming why", res.Verdict, res.Reason)
	}
	broken := mode("goroutines", 0)
	broken.Violations = []leases.Violation{{Guarantee: "one active run per session"}}
	if res = leaseStallResult(Params{}, []*leasestall.Result{broken}, nil); res.Verdict != reports.Fail {
		t.Errorf("a violation without stalls: %s, want FAIL", res.Verdict)
	}
}
