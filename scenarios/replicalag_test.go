package scenarios

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/libsql/sqld"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/internal/knownissues"
	"github.com/storecheck/storecheck/replicalag"
	"github.com/storecheck/storecheck/reports"
)

// runReplicaLagOn runs the scenario on url with CI-sized knobs.
func runReplicaLagOn(t *testing.T, url string, ops int) (Result, string) {
	t.Helper()
	return runReplicaLagOnSeed(t, url, ops, 3)
}

// runReplicaLagOnSeed is runReplicaLagOn with the run's seed.
func runReplicaLagOnSeed(t *testing.T, url string, ops int, seed uint64) (Result, string) {
	t.Helper()
	sc, err := Lookup("replica-lag-conflict")
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := sc.Applies(mustTarget(t, url).Target); !ok {
		t.Fatalf("the scenario does not apply to %s: %s", url, why)
	}
	out := keptOnFailure(t)
	target := mustTarget(t, url)
	// On sqld, 240 operations took 37 s on a quiet 2-core machine, 100 s
	// under stress-ng --cpu 3 --io 1.
	res := runWatched(t, 8*time.Minute, func(ctx context.Context) Result {
		return sc.Run(ctx, target, Params{Seed: seed, OutDir: out, Clients: 4, Executions: 2, Ops: ops})
	})
	t.Logf("%s: %s %s", url, res.Verdict, res.Reason)
	return res, out
}

func TestReplicaLagConflictOnTheSimulation(t *testing.T) {
	res, out := runReplicaLagOn(t, "lagsim:"+filepath.Join(t.TempDir(), "p.db")+"?lag=50ms", 240)
	if res.Verdict != reports.Pass {
		t.Fatalf("verdict %s: %s", res.Verdict, res.Reason)
	}
	if !strings.Contains(res.Reason, "simulation") || strings.Contains(res.Reason, "real libSQL") {
		t.Errorf("the reason must call it a simulation: %s", res.Reason)
	}
	for _, k := range []string{"lag_0ms_conflict_rate", "lag_10ms_spurious_rate", "lag_50ms_retries_per_commit", "lag_50ms_max_staleness_ms", "lost_updates", "simulation"} {
		if _, ok := res.Metrics[k]; !ok {
			t.Errorf("metric %s missing", k)
		}
	}
	if res.Metrics["lost_updates"] != 0 || res.Metrics["simulation"] != 1 || res.Digest == "" {
		t.Errorf("lost updates %v, simulation %v, digest %q", res.Metrics["lost_updates"], res.Metrics["simulation"], res.Digest)
	}
	if _, err := os.Stat(filepath.Join(out, evidence.SweepMDFile)); err != nil {
		t.Error(err)
	}
}

// TestReplicaLagConflictCatchesCASOnReplica: a replica that takes the
// compare-and-swap itself (lagsim's cas-on-replica) lets two clients commit
// from one version, so the sweep counts lost updates. The guarantee the
// verdict names is the first broken in the first level that failed, in the
// checker's order: lost update, or linearizability when that level's
// history breaks only that (seen once in about fifteen runs, with 263 lost
// updates counted in the sweep); both are this bug.
func TestReplicaLagConflictCatchesCASOnReplica(t *testing.T) {
	res, _ := runReplicaLagOn(t, "lagsim:"+filepath.Join(t.TempDir(), "p.db")+"?lag=50ms&mutant=cas-on-replica", 240)
	if res.Verdict != reports.Fail || !slices.Contains([]string{"lost update", "linearizability"}, res.Guarantee) || res.Metrics["lost_updates"] == 0 {
		t.Fatalf("verdict %s, guarantee %q: %s", res.Verdict, res.Guarantee, res.Reason)
	}
}

// TestReplicaLagConflictCatchesTornReplica: a replica that shows the rows
// of other clients' commits before their outbox entries (lagsim's
// torn-replica) passes every check of a read on its own; its outbox read
// after its load shows part of a commit, and after the heal its outbox is
// behind the primary's while its rows are the primary's, which the heal's
// loads (of rows) do not see and the convergence check (of every table,
// and of the replication position its older snapshot holds) does. Whether a read falls between a refresh's two steps is a matter of
// timing, not of the seed: one run caught it 4–8 times in 8 under load 3–5
// (docs/DETECTION.md: 9 of 10 seeds at the default knobs), so the test
// gives it up to tornTries runs, each a run of its own, and fails when
// none catches it, or when one fails for anything else.
func TestReplicaLagConflictCatchesTornReplica(t *testing.T) {
	const tornTries = 6
	catchWithin(t, "the torn replica", seedsFrom(3, tornTries), false, func(seed uint64) Result {
		res, _ := runReplicaLagOnSeed(t, "lagsim:"+filepath.Join(t.TempDir(), "p.db")+"?lag=50ms&mutant=torn-replica", 240, seed)
		return res
	}, func(res Result) bool {
		return slices.Contains([]string{"replica read", "atomicity", "replica convergence"}, res.Guarantee) && tornShown(res)
	})
}

// seedsFrom is n seeds from first on.
func seedsFrom(first uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}

// catchWithin runs a mutant's scenario on each seed, for a catch that
// depends on timing more than on the seed: a PASS is a miss, logged, and
// the first FAIL that shows the mutant (shows) ends the test; a FAIL that
// does not, or no catch in any seed, fails it. With every set each seed
// must catch it (a rate for docs/DETECTION.md, not a gate).
func catchWithin(t *testing.T, what string, seeds []uint64, every bool, run func(seed uint64) Result, shows func(Result) bool) {
	t.Helper()
	for _, seed := range seeds {
		res := run(seed)
		switch {
		case res.Verdict == reports.Pass && !every:
			t.Logf("seed %d missed %s", seed, what)
			continue
		case res.Verdict != reports.Fail || !shows(res):
			t.Errorf("seed %d: verdict %s, guarantee %q: %s", seed, res.Verdict, res.Guarantee, res.Reason)
			if !every {
				return
			}
			continue
		}
		if !every {
			return
		}
	}
	if !every {
		t.Fatalf("%d runs (seeds %v) missed %s", len(seeds), seeds, what)
	}
}

// tornShown says whether a FAIL names what the torn replica gets wrong: its
// outbox (a read of it, or its rows after the heal), or, in the
// convergence check, the replication position of its older snapshot,
// which the check may report before the tables.
func tornShown(res Result) bool {
	return strings.Contains(res.Reason, "outbox") ||
		res.Guarantee == "replica convergence" && strings.Contains(res.Reason, "replication position")
}

// TestReplicaLagConflictCatchesShortSync: a replica whose sync reports
// success but stops at the primary's state of its previous sync (lagsim's
// short-sync) reads like a replica that lags one sync more, until the
// heal: then the convergence check finds it short of the primary's
// replication position and its tables different from the primary's.
func TestReplicaLagConflictCatchesShortSync(t *testing.T) {
	res, out := runReplicaLagOn(t, "lagsim:"+filepath.Join(t.TempDir(), "p.db")+"?lag=50ms&mutant=short-sync", 240)
	if res.Verdict != reports.Fail || res.Guarantee != "replica convergence" {
		t.Fatalf("verdict %s, guarantee %q: %s", res.Verdict, res.Guarantee, res.Reason)
	}
	sweep, err := os.ReadFile(filepath.Join(out, evidence.SweepJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"after the heal's sync, the primary at", "differs from the primary after the heal"} {
		if !strings.Contains(string(sweep), want) {
			t.Errorf("the convergence check's finding %q is not in sweep.json", want)
		}
	}
}

// TestReplicaLagConflictCatchesRewindOnReconnect: a replica whose first
// sync after a failed one (a cut link, a killed primary) serves its last
// local checkpoint, older than what it served (lagsim's
// rewind-on-reconnect), goes back in time in the fault phase only, and is
// caught there only while the traffic goes on through the faults: before
// the fault phase's clients took their plan again until the last fault had
// healed, the simulation's traffic ended before the primary was killed
// (docs/DETECTION.md, "A third blind hunt").
// It runs at the scenario's default clients (8 on 4 executions: a cut
// client and every client after the primary's restart rewind, and each
// must read before its next sync; with 4 clients one run in three missed
// it). Whether a rewound replica is read before its next sync is a matter
// of timing, not of the seed: 10 of seeds 1–10 caught it on a machine
// otherwise idle, and seed 1 missed it once in make test beside the other
// packages (a clean-clone .ci/run, 2026-12-03). So the test gives it up to
// rewindTries runs (seeds 1, 2, …), each a run of its own, and fails when
// none catches it, or when one fails for anything else. With
// STORECHECK_REWIND_SEEDS (1,2,3) every seed listed must catch it: the
// rate, for docs/DETECTION.md.
func TestReplicaLagConflictCatchesRewindOnReconnect(t *testing.T) {
	const rewindTries = 4
	seeds, every := seedsFrom(1, rewindTries), false
	if s := os.Getenv("STORECHECK_REWIND_SEEDS"); s != "" {
		every = true
		seeds = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("STORECHECK_REWIND_SEEDS: %v", err)
			}
			seeds = append(seeds, n)
		}
	}
	sc, err := Lookup("replica-lag-conflict")
	if err != nil {
		t.Fatal(err)
	}
	catchWithin(t, "the rewound replica", seeds, every, func(seed uint64) Result {
		target := mustTarget(t, "lagsim:"+filepath.Join(t.TempDir(), "p.db")+"?lag=50ms&mutant=rewind-on-reconnect")
		return runWatched(t, 2*time.Minute, func(ctx context.Context) Result {
			return sc.Run(ctx, target, Params{Seed: seed, OutDir: t.TempDir(), Clients: 8, Executions: 4, Ops: 240})
		})
	}, func(res Result) bool {
		return res.Guarantee == "replica read" && strings.HasPrefix(res.Reason, "faults: ") && strings.Contains(res.Reason, "went back in time")
	})
}

// TestReplicaLagConflictOnSqld runs the same scenario on real embedded
// replicas; without sqld (no binary, no local image) it must come out NOT
// RUN with the reason, which is what this test then checks.
func TestReplicaLagConflictOnSqld(t *testing.T) {
	url := "libsql+replica:" + filepath.Join(t.TempDir(), "r.db") + "?sync_interval=50ms"
	_, unavailable := sqld.Find(context.Background(), "", "")
	// 120 operations: a sweep of every level and the fault phase on a real
	// sqld (the claim is that a correct server passes it); 240 cost 39 s of
	// CPU, the largest test of make test, for no check this one lacks.
	res, out := runReplicaLagOn(t, url, 120)
	if res.Verdict == reports.Fail {
		if is := knownissues.Match("libsql+replica", "replica-lag-conflict", res.Guarantee, out); is != nil {
			// A recorded sqld bug, shown by the run's own evidence: the run
			// could not show the scenario passing on a correct server, so
			// not a PASS either. The evidence is kept.
			t.Skipf("NOT RUN: FAIL explained by known issue %s (%s): %s", is.ID, is.Doc, res.Reason)
		}
	}
	if res.Verdict != reports.Pass {
		if spun := spinEvidence(out); spun != "" {
			// sqld spun (the backend's spin watch wrote its evidence), but
			// the evidence does not show the hand-off of
			// sqld-write-lock-spin, e.g. no gdb for a thread dump: not a
			// verdict on the server and not a PASS. The evidence is kept.
			t.Skipf("NOT RUN: %s %s while sqld spun (%s; not matched to sqld-write-lock-spin, docs/KNOWN-ISSUES.md)", res.Verdict, res.Reason, spun)
		}
	}
	if unavailable == nil && res.Verdict == reports.NotRun && strings.Contains(res.Reason, "abandoned") {
		// A go-libsql call outlived its deadline and was abandoned (its
		// calls cannot be cancelled): seen once on a machine loaded far
		// past its cores, beside a primary restart. The run could not say
		// whether the server passes; it said so, and so does this test.
		t.Skipf("NOT RUN: the run was NOT RUN, a go-libsql call abandoned after its deadline (a machine too slow for the run?): %s", res.Reason)
	}
	if unavailable != nil {
		if res.Verdict != reports.NotRun || !strings.Contains(res.Reason, "sqld") {
			t.Fatalf("without sqld: %s %s; want NOT RUN naming sqld", res.Verdict, res.Reason)
		}
		t.Skipf("NOT RUN: %v", unavailable)
	}
	if res.Verdict != reports.Pass || res.Metrics["simulation"] != 0 {
		t.Fatalf("on sqld: %s %s", res.Verdict, res.Reason)
	}
}

func TestReplicaLagConflictApplies(t *testing.T) {
	sc, err := Lookup("replica-lag-conflict")
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]bool{"lagsim:/tmp/p.db": true, "libsql+replica:/tmp/r.db": true, "sqlite:/tmp/x.db": false, "memory:": false} {
		if ok, why := sc.Applies(mustTarget(t, url).Target); ok != want || (!ok && why == "") {
			t.Errorf("Applies(%s) = %v %q, want %v", url, ok, why, want)
		}
	}
	if _, err := TargetFor("lagsim:/nonexistent-dir/p.db"); err == nil {
		t.Errorf("a bad URL was resolved")
	}
}

// spinEvidence names the spin evidence files the sqld spin watch wrote
// under out, "" when there is none.
func spinEvidence(out string) string {
	var found []string
	_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, sqld.SpinEvidenceSuffix) {
			found = append(found, path)
		}
		return nil
	})
	return strings.Join(found, ", ")
}

// keptOnFailure is a run folder that is removed when the test passes and
// kept, with its path logged, when it fails or is NOT RUN: the evidence of a FAIL on a
// real server must survive the test.
func keptOnFailure(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "storecheck-evidence-"+strings.ReplaceAll(t.Name(), "/", "-")+"-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			t.Logf("evidence kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// mustTarget resolves url or fails the test.
func mustTarget(t *testing.T, url string) Target {
	t.Helper()
	tg, err := TargetFor(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// A sweep whose fault phase injected none of its faults is NOT RUN with
// why, not PASS; one injected fault is enough; a sweep run without a
// fault phase is left as it is.
func TestFaultPhaseUnchecked(t *testing.T) {
	stalled := evidence.Fault{Fault: "stall-replica"}
	refused := evidence.Fault{Fault: "kill-replica", Error: "no such process", NotInjected: true}
	for _, tc := range []struct {
		name   string
		faults *replicalag.LevelResult
		want   reports.Verdict
		reason string
	}{
		{"no fault phase", nil, reports.Pass, "sweep"},
		{"all refused", &replicalag.LevelResult{Faults: []evidence.Fault{refused, refused}}, reports.NotRun, "all 2 injections failed (first: kill-replica: no such process)"},
		{"none planned", &replicalag.LevelResult{}, reports.NotRun, "none was planned"},
		{"one injected", &replicalag.LevelResult{Faults: []evidence.Fault{refused, stalled}}, reports.Pass, "sweep"},
	} {
		out := Result{Verdict: reports.Pass, Reason: "sweep"}
		faultPhaseUnchecked(&out, &replicalag.Result{Faults: tc.faults})
		if out.Verdict != tc.want || !strings.Contains(out.Reason, tc.reason) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, out.Verdict, out.Reason, tc.want, tc.reason)
		}
	}
}
