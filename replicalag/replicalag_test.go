package replicalag

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

// small is a CI-sized sweep: four clients on two executions, three lags.
func small(dir string, seed uint64) Config {
	return Config{
		Clients: 4, Executions: 2, Updates: 240, Seed: seed, Faults: true,
		Levels: []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond},
		OutDir: dir, LevelTime: 10 * time.Second,
	}
}

func lagsimTargetT(t *testing.T, query string) *Target {
	t.Helper()
	bt, err := backends.Resolve("lagsim:" + filepath.Join(t.TempDir(), "p.db") + query)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := bt.Replicas(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestSweepOnTheSimulation: every phase passes, nothing is lost, the
// replicas converge, the files are written, and conflicts come with lag.
func TestSweepOnTheSimulation(t *testing.T) {
	dir := t.TempDir()
	res, err := Run(context.Background(), lagsimTargetT(t, "?lag=50ms"), small(dir, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, lr := range res.phases() {
		t.Logf("%s: %d updates, %d commits, conflict rate %.2f (spurious %.2f), retries %.2f, gave up %d, worst staleness %v; %s %v",
			lr.Name, lr.Updates, lr.Commits, lr.ConflictRate(), lr.SpuriousRate(), lr.RetriesPerCommit(), lr.GaveUp, lr.MaxStaleness, lr.Verdict, lr.Violations)
	}
	if res.Verdict != linearizability.Ok {
		t.Fatalf("verdict %s: %s", res.Verdict, res.Reason)
	}
	m := res.Metrics()
	if m["lost_updates"] != 0 || m["simulation"] != 1 || m["levels"] != 3 {
		t.Errorf("metrics %v", m)
	}
	for _, k := range []string{"lag_0ms_conflict_rate", "lag_50ms_spurious_rate", "lag_10ms_retries_per_commit", "lag_50ms_max_staleness_ms", "faults_lost_updates"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metric %s missing", k)
		}
	}
	if top := res.Levels[2]; top.Commits == 0 || top.Spurious == 0 || top.StaleReads == 0 {
		t.Errorf("at 50ms the replicas never lagged: %+v", top)
	}
	if res.Levels[0].MaxStaleness > 50*time.Millisecond {
		t.Errorf("syncing before every read left a read %v stale", res.Levels[0].MaxStaleness)
	}
	if f := res.Faults; f == nil || len(f.Faults) != 3 {
		t.Errorf("fault phase: %+v", f)
	}
	for _, name := range []string{evidence.SweepJSONFile, evidence.SweepMDFile, "history.jsonl", "faults.jsonl", "lag_50ms/history.jsonl", "faults/faults.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, evidence.SweepMDFile))
	if !strings.Contains(string(md), "simulation") || !strings.Contains(string(md), "| lag_50ms |") {
		t.Errorf("sweep.md does not say simulation or lacks the table:\n%s", md)
	}
}

// TestCASOnReplicaIsCaught: the mutant that decides the CAS on the replica
// loses updates, and the sweep says so.
func TestCASOnReplicaIsCaught(t *testing.T) {
	cfg := small("", 3)
	cfg.Levels, cfg.Faults = []time.Duration{50 * time.Millisecond}, false
	res, err := Run(context.Background(), lagsimTargetT(t, "?lag=50ms&mutant=cas-on-replica"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Illegal || res.Guarantee != linearizability.ErrLostUpdate.Error() || res.Metrics()["lost_updates"] == 0 {
		t.Fatalf("verdict %s, guarantee %q, reason %s", res.Verdict, res.Guarantee, res.Reason)
	}
}

// TestScheduleIsSeeded: equal seeds give equal digests; a different seed,
// a different one.
func TestScheduleIsSeeded(t *testing.T) {
	tg := lagsimTargetT(t, "?lag=200ms")
	a, b, c := Digest(tg, Config{Seed: 3, Faults: true}), Digest(tg, Config{Seed: 3, Faults: true}), Digest(tg, Config{Seed: 4, Faults: true})
	if a == "" || a != b || a == c {
		t.Errorf("digests %q %q %q: want equal for equal seeds, different otherwise", a, b, c)
	}
	p1, p2 := newPlans(3, 1, 4, 100, 4), newPlans(3, 1, 4, 100, 4)
	for i := range p1 {
		if len(p1[i].targets) != 25 || p1[i].backoff(5, 3) != p2[i].backoff(5, 3) {
			t.Fatalf("plans differ for one seed")
		}
	}
}

func TestLevels(t *testing.T) {
	cases := map[time.Duration]string{
		0:                      "[0s]",
		200 * time.Millisecond: "[0s 10ms 50ms 200ms]",
		100 * time.Millisecond: "[0s 10ms 50ms 100ms]",
		2 * time.Second:        "[0s 10ms 50ms 200ms 1s 2s]",
	}
	for top, want := range cases {
		if got := fmtDurations(Levels(top)); got != want {
			t.Errorf("Levels(%v) = %s, want %s", top, got, want)
		}
	}
	if Label(1500*time.Microsecond) != "lag_1500us" || Label(200*time.Millisecond) != "lag_200ms" {
		t.Errorf("labels %s %s", Label(1500*time.Microsecond), Label(200*time.Millisecond))
	}
}

func fmtDurations(ds []time.Duration) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}
