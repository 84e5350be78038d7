package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

type quiet struct{}

func (quiet) Started(string, string, *scenarios.Progress) {}
func (quiet) Finished(reports.Run)                        {}

// scenario returns a scenario that runs fn.
func scenario(fn func(ctx context.Context, t scenarios.Target, p scenarios.Params) scenarios.Result) scenarios.Scenario {
	return scenarios.Scenario{Name: "s", Needs: []backends.Capability{backends.ExecutionStore}, Run: fn}
}

func run(t *testing.T, plan Plan) []reports.Run {
	t.Helper()
	plan.Out = t.TempDir()
	return Execute(context.Background(), plan, quiet{}).Runs
}

// A scenario that claims success without running an operation is not a
// pass; one that ran something is.
func TestEmptyPassIsNotRun(t *testing.T) {
	for _, c := range []struct {
		ops  int64
		want reports.Verdict
	}{{0, reports.NotRun}, {1, reports.Pass}} {
		sc := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
			return scenarios.Result{Verdict: reports.Pass, Ops: c.ops}
		})
		runs := run(t, Plan{Entries: []Entry{{Backend: "memory:", Scenario: sc, Seed: 1}}})
		if got := runs[0].Verdict; got != c.want {
			t.Errorf("ops=%d: verdict %s, want %s", c.ops, got, c.want)
		}
	}
}

// A run whose store could not be opened because the run was interrupted
// (a scenario's open returned the canceled context's error) is
// INTERRUPTED, not NOT RUN: nothing says the backend could not be started.
func TestInterruptedOpenIsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := scenario(func(ctx context.Context, _ scenarios.Target, _ scenarios.Params) scenarios.Result {
		cancel() // the interrupt arrives while the store opens
		return scenarios.Result{Verdict: reports.NotRun, Reason: "backend could not be opened: begin: " + ctx.Err().Error()}
	})
	runs := Execute(ctx, Plan{Entries: []Entry{{Backend: "memory:", Scenario: sc, Seed: 1}}, Out: t.TempDir()}, quiet{}).Runs
	if r := runs[0]; r.Verdict != reports.Interrupted || !strings.Contains(r.Reason, "context canceled") {
		t.Errorf("verdict %s (%s), want %s keeping the reason", r.Verdict, r.Reason, reports.Interrupted)
	}
}

// Matrix leaves out the pairs that do not apply only when asked to.
func TestMatrix(t *testing.T) {
	sc := scenario(nil)
	runStores := []string{"memory:", "runs+memory:"}
	if got := len(Matrix(runStores, []scenarios.Scenario{sc}, 1, true)); got != 1 {
		t.Errorf("only applicable: %d entries, want 1", got)
	}
	runs := run(t, Plan{Entries: Matrix([]string{"runs+memory:"}, []scenarios.Scenario{sc}, 1, false)})
	if len(runs) != 1 || runs[0].Verdict != reports.NotRun || !strings.Contains(runs[0].Reason, "does not apply") {
		t.Errorf("asked for by name: %+v", runs)
	}
}

// A {dir} backend gets a fresh folder per run, removed afterwards; the
// seed is the entry's; Instrument sees every store opened.
func TestEntries(t *testing.T) {
	var dirs []string
	var wrapped atomic.Int64
	sc := opening(&dirs)
	runs := run(t, Plan{
		Entries:    []Entry{{Backend: "sqlite:{dir}/x.db", Scenario: sc, Seed: 3}, {Backend: "sqlite:{dir}/x.db", Scenario: sc, Seed: 4, Subject: "twin"}},
		Instrument: func(i int, st model.Store) model.Store { wrapped.Add(1); return st },
	})
	if len(runs) != 2 || runs[0].Ops != 3 || runs[1].Ops != 4 || runs[1].Subject != "twin" {
		t.Fatalf("runs %+v", runs)
	}
	if len(dirs) != 2 || dirs[0] == dirs[1] || strings.Contains(dirs[0], DirPlaceholder) {
		t.Errorf("database files %v: want two fresh ones", dirs)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s outlived its run", d)
		}
	}
	if wrapped.Load() != 2 {
		t.Errorf("Instrument saw %d stores, want 2", wrapped.Load())
	}
}

// TestKeptStores: with KeepStores each run's {dir} is the StoreFolder of
// its own run folder, and the database stays there after the run, emptied
// of what an earlier run in the same folder left.
func TestKeptStores(t *testing.T) {
	out := t.TempDir()
	stale := filepath.Join(out, "runs", "01-sqlite-x-db-probe", StoreFolder, "stale.db")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("left by an earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	sc := opening(&files)
	sc.Name = "probe"
	runs := Execute(context.Background(), Plan{
		Entries: []Entry{{Backend: "sqlite:{dir}/x.db", Scenario: sc, Seed: 1}, {Backend: "sqlite:{dir}/x.db", Scenario: sc, Seed: 2}},
		Out:     out, KeepStores: true,
	}, quiet{}).Runs
	for i, r := range runs {
		want := filepath.Join(out, r.Dir, StoreFolder, "x.db")
		if r.Verdict != reports.Pass || len(files) != 2 || files[i] != want {
			t.Errorf("run %d (%s %s): database files %v; want one of them %s", i, r.Verdict, r.Reason, files, want)
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("run %d: its database did not stay in its folder: %v", i, err)
		}
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s, left by an earlier run, is still in the run's database folder", stale)
	}
}

// opening is a scenario that notes its target's file in files, opens and
// closes a store there, and passes with its seed as its operation count.
// Its runs must go one at a time.
func opening(files *[]string) scenarios.Scenario {
	return scenario(func(ctx context.Context, tg scenarios.Target, p scenarios.Params) scenarios.Result {
		*files = append(*files, tg.File)
		st, err := tg.Open(ctx, model.DefaultConfig())
		if err != nil {
			return scenarios.Result{Verdict: reports.NotRun, Reason: err.Error()}
		}
		st.Close()
		return scenarios.Result{Verdict: reports.Pass, Ops: int64(p.Seed)}
	})
}

// Skip and Budget end runs as NOT RUN with the reason, unless a failure
// was found first.
func TestSkipAndBudget(t *testing.T) {
	slow := func(verdict reports.Verdict) scenarios.Scenario {
		return scenario(func(ctx context.Context, _ scenarios.Target, _ scenarios.Params) scenarios.Result {
			<-ctx.Done()
			return scenarios.Result{Verdict: verdict, Reason: "stopped", Ops: 1}
		})
	}
	runs := run(t, Plan{
		Entries: []Entry{{Backend: "memory:", Scenario: slow(reports.Interrupted)}, {Backend: "memory:", Scenario: slow(reports.Fail)},
			{Backend: "memory:", Scenario: slow(reports.Pass)}},
		Budget: 50 * time.Millisecond,
		Skip: func(done []reports.Run, e Entry) string {
			if len(done) == 2 {
				return "skipped: enough"
			}
			return ""
		},
	})
	if runs[0].Verdict != reports.NotRun || !strings.Contains(runs[0].Reason, "over the budget") {
		t.Errorf("over budget: %s %s", runs[0].Verdict, runs[0].Reason)
	}
	if runs[1].Verdict != reports.Fail {
		t.Errorf("a failure found before the budget ran out: %s", runs[1].Verdict)
	}
	if runs[2].Verdict != reports.NotRun || runs[2].Reason != "skipped: enough" {
		t.Errorf("skipped: %s %s", runs[2].Verdict, runs[2].Reason)
	}
}

// TestParallel: runs of different lanes overlap up to Parallel; runs of
// one lane never do and keep their order; timed runs go after every
// untimed run of their lane, and while one goes the runs going (one core
// each) never keep more than TimedCores busy; the summary lists every run
// in plan order.
func TestParallel(t *testing.T) {
	for _, tc := range []struct{ parallel, timedParallel, wantTimedPeak int }{
		{parallel: 3, timedParallel: 0, wantTimedPeak: 1},
		{parallel: 3, timedParallel: 1, wantTimedPeak: 1},
		{parallel: 3, timedParallel: 2, wantTimedPeak: 2},
		{parallel: 2, timedParallel: 4, wantTimedPeak: 2}, // never above Parallel
	} {
		t.Run(fmt.Sprintf("parallel=%d,timed=%d", tc.parallel, tc.timedParallel), func(t *testing.T) {
			testParallel(t, tc.parallel, tc.timedParallel, tc.wantTimedPeak)
		})
	}
}

func testParallel(t *testing.T, parallel, timedParallel, wantTimedPeak int) {
	var (
		now, peak, timedPeak atomic.Int64
		timedNow, untimedNow atomic.Int64
		over                 atomic.Int64 // a timed run saw more cores busy than TimedCores
		laneBusy             [4]atomic.Int64
		laneOrder            [4][]string
		mu                   = make(chan struct{}, 1)
	)
	mk := func(name string, laneIx int, timed bool) scenarios.Scenario {
		sc := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
			raise(&peak, now.Add(1))
			defer now.Add(-1)
			mine := &untimedNow
			if timed {
				mine = &timedNow
				raise(&timedPeak, timedNow.Add(1))
			} else {
				untimedNow.Add(1)
			}
			defer mine.Add(-1)
			if laneBusy[laneIx].Add(1) > 1 {
				t.Errorf("two runs of lane %d at once", laneIx)
			}
			defer laneBusy[laneIx].Add(-1)
			mu <- struct{}{}
			laneOrder[laneIx] = append(laneOrder[laneIx], name)
			<-mu
			for range 3 {
				time.Sleep(10 * time.Millisecond)
				if timed && timedNow.Load()+untimedNow.Load() > int64(max(1, min(parallel, timedParallel))) {
					over.Add(1)
				}
			}
			return scenarios.Result{Verdict: reports.Pass, Reason: name, Ops: 1}
		})
		sc.Name, sc.Timed = name, timed
		return sc
	}
	// Each lane: an untimed run, two timed ones, an untimed one; the timed
	// ones go after the lane's untimed runs, so a lane runs in the order
	// 0, 3, 1, 2.
	var entries []Entry
	// Files named in the URLs (never opened here): each backend's runs
	// share its file, so they are one lane.
	dir := t.TempDir()
	var backendsOf []string
	for _, f := range []string{"a", "b", "c", "d"} {
		backendsOf = append(backendsOf, "sqlite:"+filepath.Join(dir, f+".db"))
	}
	for i, b := range backendsOf {
		for j, timed := range []bool{false, true, true, false} {
			entries = append(entries, Entry{Backend: b, Scenario: mk(b+string(rune('0'+j)), i, timed), Seed: 1})
		}
	}
	runs := run(t, Plan{Entries: entries, Parallel: parallel, TimedCores: timedParallel})
	if got := peak.Load(); got != int64(parallel) {
		t.Errorf("at most %d runs at once; want %d", got, parallel)
	}
	if got := timedPeak.Load(); got != int64(wantTimedPeak) {
		t.Errorf("at most %d timed runs at once; want %d", got, wantTimedPeak)
	}
	if over.Load() != 0 {
		t.Errorf("a timed run went with more runs going than TimedCores %d times", over.Load())
	}
	for i, e := range entries {
		if runs[i].Reason != e.Scenario.Name {
			t.Fatalf("run %d is %q; want %q in plan order", i, runs[i].Reason, e.Scenario.Name)
		}
	}
	for i, order := range laneOrder {
		name := func(j int) string { return entries[4*i+j].Scenario.Name }
		want := []string{name(0), name(3), name(1), name(2)}
		if strings.Join(order, ",") != strings.Join(want, ",") {
			t.Errorf("lane %d ran %v; want %v", i, order, want)
		}
	}
}

// TestSummarySaysHowManyAtOnce: the summary records the runs the plan let
// go at once, the timed ones never above the rest.
func TestSummarySaysHowManyAtOnce(t *testing.T) {
	pass := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	})
	for _, c := range []struct {
		parallel, timed int
		want            reports.Parallel
	}{
		{0, 0, reports.Parallel{Runs: 1, TimedCores: 1}},
		{2, 2, reports.Parallel{Runs: 2, TimedCores: 2}},
		{3, 8, reports.Parallel{Runs: 3, TimedCores: 3}},
		{4, 0, reports.Parallel{Runs: 4, TimedCores: 1}},
	} {
		plan := Plan{Entries: []Entry{{Backend: "memory:", Scenario: pass, Seed: 1}}, Parallel: c.parallel, TimedCores: c.timed, Out: t.TempDir()}
		sum := Execute(context.Background(), plan, quiet{})
		if sum.Parallel == nil || *sum.Parallel != c.want {
			t.Errorf("Parallel %d, TimedCores %d: summary says %v; want %v", c.parallel, c.timed, sum.Parallel, c.want)
		}
	}
}

// TestOwnRunsGoSideBySide: runs of one backend that share no state
// overlap, where runs of one backend otherwise never do; footprint reads
// which backends those are — a fresh folder per run, backends that start
// every store from nothing — and the cores a run of each keeps busy.
func TestOwnRunsGoSideBySide(t *testing.T) {
	var o overlap
	sc := napping(&o)
	for url, want := range map[string]int64{"memory:": 3, "sqlite:" + filepath.Join(t.TempDir(), "s.db"): 1} {
		o.peak.Store(0)
		entries := []Entry{{Backend: url, Scenario: sc, Seed: 1}, {Backend: url, Scenario: sc, Seed: 1}, {Backend: url, Scenario: sc, Seed: 1}}
		run(t, Plan{Entries: entries, Parallel: 3})
		if o.peak.Load() != want {
			t.Errorf("%s: %d runs at once; want %d", url, o.peak.Load(), want)
		}
	}
	for url, want := range map[string]footprint{
		"memory:":                 {own: true, cores: 1, inProcess: true},
		"sqlite:{dir}/s.db":       {own: true, cores: 1, inProcess: true},
		"rqlite+process:?nodes=3": {own: true, cores: 1.5},
		"sqlite:/tmp/s.db":        {cores: 1, inProcess: true},
		"lagsim:/tmp/p.db":        {cores: 1, inProcess: true},
		"rqlite://127.0.0.1:4001": {cores: 1},
		"nosuch:x":                {cores: 1},
	} {
		if got := footprintOf(Entry{Backend: url}); got != want {
			t.Errorf("%s: %+v; want %+v", url, got, want)
		}
	}
}

// TestTimedRunsWithinCores: timed runs go side by side only while the
// cores they keep busy fit in TimedCores; one that does not fit even alone
// still runs, alone.
func TestTimedRunsWithinCores(t *testing.T) {
	for _, c := range []struct {
		backend  string // runs on it share nothing; the cores they keep busy in the comment
		capacity int
		want     int64
		cores    float64 // the scenario's own count, when set
	}{
		{backend: "rqlite+process:?nodes=3", capacity: 2, want: 1}, // 1.5
		{backend: "rqlite+process:?nodes=3", capacity: 3, want: 2},
		{backend: "memory:", capacity: 3, want: 3},                 // 1
		{backend: "rqlite+process:?nodes=8", capacity: 2, want: 1}, // 4: alone
		{backend: "memory:", capacity: 2, want: 4, cores: 0.5},     // a scenario that mostly waits
		{backend: "rqlite+process:?nodes=3", capacity: 2, want: 2, cores: 0.75},
	} {
		var o overlap
		sc := napping(&o)
		sc.Timed = true
		if c.cores > 0 {
			sc.Cores = func(*backends.Target) float64 { return c.cores }
		}
		var entries []Entry
		for range 4 {
			entries = append(entries, Entry{Backend: c.backend, Scenario: sc, Seed: 1})
		}
		runs := run(t, Plan{Entries: entries, Parallel: 4, TimedCores: c.capacity})
		if o.peak.Load() != c.want {
			t.Errorf("runs on %s within %d cores: %d at once; want %d", c.backend, c.capacity, o.peak.Load(), c.want)
		}
		for i, r := range runs {
			if r.Verdict != reports.Pass {
				t.Errorf("run %d: %s %s", i, r.Verdict, r.Reason)
			}
		}
	}
}

// TestInProcessOvercommit: timed runs on in-process stores go up to
// InProcessOvercommit times TimedCores among themselves; a run of a
// server's still never goes where more than TimedCores are busy, whether
// it starts first or last; the summary records the overcommitted budget.
func TestInProcessOvercommit(t *testing.T) {
	const cluster = "rqlite+process:?nodes=3" // 1.5 cores, never started: the scenario only naps
	for _, c := range []struct {
		name       string
		overcommit float64
		backends   []string
		wantPeak   int64
		wantSum    reports.Parallel
	}{
		{"none", 0, []string{"memory:", "memory:", "memory:", "memory:"}, 2, reports.Parallel{Runs: 4, TimedCores: 2}},
		{"half again", 1.5, []string{"memory:", "memory:", "memory:", "memory:"}, 3, reports.Parallel{Runs: 4, TimedCores: 2, InProcessCores: 3}},
		{"cluster first", 1.5, []string{cluster, "memory:", "memory:", "memory:"}, 3, reports.Parallel{Runs: 4, TimedCores: 2, InProcessCores: 3}},
		{"cluster last", 1.5, []string{"memory:", "memory:", "memory:", cluster}, 3, reports.Parallel{Runs: 4, TimedCores: 2, InProcessCores: 3}},
		{"clusters", 1.5, []string{cluster, cluster}, 1, reports.Parallel{Runs: 4, TimedCores: 2, InProcessCores: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o overlap
			sc := napping(&o)
			sc.Timed = true
			var entries []Entry
			for _, b := range c.backends {
				entries = append(entries, Entry{Backend: b, Scenario: sc, Seed: 1})
			}
			plan := Plan{Entries: entries, Parallel: 4, TimedCores: 2, InProcessOvercommit: c.overcommit, Out: t.TempDir()}
			sum := Execute(context.Background(), plan, quiet{})
			if o.peak.Load() != c.wantPeak {
				t.Errorf("%d runs at once; want %d", o.peak.Load(), c.wantPeak)
			}
			if *sum.Parallel != c.wantSum {
				t.Errorf("summary says %+v; want %+v", *sum.Parallel, c.wantSum)
			}
			for i, r := range sum.Runs {
				if r.Verdict != reports.Pass {
					t.Errorf("run %d: %s %s", i+1, r.Verdict, r.Reason)
				}
				if c.backends[i] == cluster && len(r.Beside) > 0 {
					t.Errorf("run %d, of a cluster, went beside runs %v: more than 2 cores busy", i+1, r.Beside)
				}
			}
		})
	}
}

// TestTimedGoesBesideTheLastUntimed: once every untimed run has started,
// a timed run that fits beside those still going starts at once.
func TestTimedGoesBesideTheLastUntimed(t *testing.T) {
	var o overlap
	long := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		defer o.enter()()
		time.Sleep(150 * time.Millisecond)
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	})
	timed := napping(&o)
	timed.Timed = true
	entries := []Entry{{Backend: "memory:", Scenario: long, Seed: 1}, {Backend: "memory:", Scenario: timed, Seed: 1}}
	for _, c := range []struct {
		cores int
		want  int64
	}{{2, 2}, {1, 1}} {
		o.peak.Store(0)
		run(t, Plan{Entries: entries, Parallel: 2, TimedCores: c.cores})
		if o.peak.Load() != c.want {
			t.Errorf("within %d cores: %d runs at once; want %d", c.cores, o.peak.Load(), c.want)
		}
	}
}

// TestTimedRunsLongestFirst: timed runs start by their scenario's expected
// length, longest first, plan order among equals; the summary keeps plan
// order.
func TestTimedRunsLongestFirst(t *testing.T) {
	var mu sync.Mutex
	var started []string
	mk := func(name string, length time.Duration) scenarios.Scenario {
		sc := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
			mu.Lock()
			started = append(started, name)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			return scenarios.Result{Verdict: reports.Pass, Ops: 1}
		})
		sc.Name, sc.Timed, sc.Length = name, true, length
		return sc
	}
	var entries []Entry
	for _, sc := range []scenarios.Scenario{mk("short", time.Second), mk("unknown", 0), mk("long", 3*time.Second), mk("middle", 2*time.Second), mk("short-too", time.Second)} {
		entries = append(entries, Entry{Backend: "memory:", Scenario: sc, Seed: 1})
	}
	runs := run(t, Plan{Entries: entries, Parallel: 2, TimedCores: 1})
	if got, want := strings.Join(started, ","), "long,middle,short,short-too,unknown"; got != want {
		t.Errorf("started %s; want %s", got, want)
	}
	for i, r := range runs {
		if r.Scenario != entries[i].Scenario.Name {
			t.Errorf("summary run %d is %s; want %s", i, r.Scenario, entries[i].Scenario.Name)
		}
	}
}

// overlap counts the runs going at once, and the most ever at once.
type overlap struct{ now, peak atomic.Int64 }

// enter counts a run in; the func it returns counts it out.
func (o *overlap) enter() func() {
	raise(&o.peak, o.now.Add(1))
	return func() { o.now.Add(-1) }
}

// raise sets p to n when n is above it.
func raise(p *atomic.Int64, n int64) {
	for {
		old := p.Load()
		if n <= old || p.CompareAndSwap(old, n) {
			return
		}
	}
}

// napping is a scenario that passes after 30 ms, counted by o.
func napping(o *overlap) scenarios.Scenario {
	return scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		defer o.enter()()
		time.Sleep(30 * time.Millisecond)
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	})
}

// TestRunsNameTheirNeighbours: a run that went beside others names them
// (by position); a run alone, a run whose scenario did not apply, and
// every run of a plan one at a time name none.
func TestRunsNameTheirNeighbours(t *testing.T) {
	both := make(chan struct{}, 2)
	together := func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		both <- struct{}{}
		deadline := time.Now().Add(5 * time.Second)
		for len(both) < 2 && time.Now().Before(deadline) { // wait for the other, bounded
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond)
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	}
	alone := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	})
	alone.Timed = true // after the untimed ones, and one timed run at a time
	runStoreOnly := scenario(nil)
	runStoreOnly.Needs = []backends.Capability{backends.RunStore}
	entries := []Entry{
		{Backend: "memory:", Scenario: scenario(together), Seed: 1},
		{Backend: "memory:", Scenario: scenario(together), Seed: 1},
		{Backend: "memory:", Scenario: runStoreOnly, Seed: 1}, // NOT RUN: does not apply
		{Backend: "memory:", Scenario: alone, Seed: 1},
	}
	runs := run(t, Plan{Entries: entries, Parallel: 2, TimedCores: 1})
	want := [][]int{{2}, {1}, nil, nil}
	for i, r := range runs {
		if fmt.Sprint(r.Beside) != fmt.Sprint(want[i]) {
			t.Errorf("run %d (%s, %s): beside %v, want %v", i+1, r.Scenario, r.Verdict, r.Beside, want[i])
		}
	}
	quick := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		time.Sleep(5 * time.Millisecond)
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	})
	one := []Entry{{Backend: "memory:", Scenario: quick, Seed: 1}, {Backend: "memory:", Scenario: quick, Seed: 1}}
	for i, r := range run(t, Plan{Entries: one, Parallel: 1}) {
		if r.Beside != nil {
			t.Errorf("one at a time: run %d beside %v", i+1, r.Beside)
		}
	}
}

// PlanDigest tells plans apart by what they run: each backend, scenario,
// seed and option, and their order; not by a secret in a URL.
func TestPlanDigest(t *testing.T) {
	a, b := scenario(nil), scenario(nil)
	b.Name = "other"
	opts := map[string]string{"checks": "5", "ops": "50"}
	base := PlanDigest(Matrix([]string{"memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{a, b}, 4, false), opts, "")
	if len(base) != 64 || base != PlanDigest(Matrix([]string{"memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{a, b}, 4, false), map[string]string{"ops": "50", "checks": "5"}, "") {
		t.Fatalf("one plan, two digests (or not a SHA-256): %s", base)
	}
	for name, other := range map[string]string{
		"another backend":     PlanDigest(Matrix([]string{"runs+memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{a, b}, 4, false), opts, ""),
		"backends reordered":  PlanDigest(Matrix([]string{"sqlite:{dir}/x.db", "memory:"}, []scenarios.Scenario{a, b}, 4, false), opts, ""),
		"scenarios reordered": PlanDigest(Matrix([]string{"memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{b, a}, 4, false), opts, ""),
		"another seed":        PlanDigest(Matrix([]string{"memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{a, b}, 5, false), opts, ""),
		"another option":      PlanDigest(Matrix([]string{"memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{a, b}, 4, false), map[string]string{"checks": "6", "ops": "50"}, ""),
		"one run fewer":       PlanDigest(Matrix([]string{"memory:", "sqlite:{dir}/x.db"}, []scenarios.Scenario{a}, 4, false), opts, ""),
	} {
		if other == base {
			t.Errorf("%s: the same digest", name)
		}
	}
	if PlanDigest([]Entry{{Backend: "sqlite:/o/s1/q.db", Scenario: a, Seed: 1}}, nil, "/o/s1") != PlanDigest([]Entry{{Backend: "sqlite:/o/s2/q.db", Scenario: a, Seed: 1}}, nil, "/o/s2") {
		t.Error("a path under each shard's own output folder gives another digest")
	}
	// --out s1 (relative) with the backend's file given by its absolute path.
	t.Chdir(t.TempDir())
	wd, _ := os.Getwd()
	if PlanDigest([]Entry{{Backend: "sqlite:" + filepath.Join(wd, "s1", "q.db"), Scenario: a, Seed: 1}}, nil, "s1") != PlanDigest([]Entry{{Backend: "sqlite:s2/q.db", Scenario: a, Seed: 1}}, nil, "s2") {
		t.Error("a path under a relative output folder, given absolute, gives another digest")
	}
	one := PlanDigest([]Entry{{Backend: "rqlite://u:secret1@h:4001", Scenario: a, Seed: 1}}, nil, "")
	if one != PlanDigest([]Entry{{Backend: "rqlite://u:secret2@h:4001", Scenario: a, Seed: 1}}, nil, "") {
		t.Error("the digest depends on a password in the URL: it is hashed unredacted")
	}
}

// A plan without runs (a shard of a plan with fewer runs than shards)
// records the plan's seed, not 0.
func TestEmptyPlanRecordsItsSeed(t *testing.T) {
	sum := Execute(context.Background(), Plan{Params: scenarios.Params{Seed: 4}, Shard: &reports.Shard{K: 3, N: 3, Plan: 2}}, quiet{})
	if sum.Seed != 4 || len(sum.Runs) != 0 {
		t.Errorf("seed %d, %d runs; want seed 4, no run", sum.Seed, len(sum.Runs))
	}
}

// TestTempStoresOfKilledRunsAreSwept: a run's temporary database folder
// is removed after the run, and one a killed storecheck left behind (its
// process gone) is removed by the next run that makes one; a live
// process's folder is left alone.
func TestTempStoresOfKilledRunsAreSwept(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(tmp, fmt.Sprintf("storecheck-run-%d-123", dead.Process.Pid))
	live := filepath.Join(tmp, "storecheck-run-1-456") // pid 1 is alive
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(filepath.Join(d, "x.db"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	sc := opening(&files)
	runs := Execute(context.Background(), Plan{
		Entries: []Entry{{Backend: "sqlite:{dir}/x.db", Scenario: sc, Seed: 1}},
		Out:     t.TempDir(), TempDir: tmp,
	}, quiet{}).Runs
	if runs[0].Verdict != reports.Pass || len(files) != 1 || !strings.HasPrefix(files[0], filepath.Join(tmp, fmt.Sprintf("storecheck-run-%d-", os.Getpid()))) {
		t.Fatalf("run: %s %s, database files %v", runs[0].Verdict, runs[0].Reason, files)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "storecheck-run-*"))
	if len(left) != 1 || left[0] != live {
		t.Errorf("folders left: %v; want only the live process's %s", left, live)
	}
}

// keys records the backend each run was started and finished under.
type keys struct{ started, finished []string }

func (k *keys) Started(backend, _ string, _ *scenarios.Progress) {
	k.started = append(k.started, backend)
}
func (k *keys) Finished(r reports.Run) { k.finished = append(k.finished, r.Backend) }

// A run's reason is scrubbed of its URL's secrets, and its backend is the
// one progress was told at its start, even when the secret's value also
// stands elsewhere in the URL (progress finds the run by it).
func TestScrubbedRunKeepsItsBackend(t *testing.T) {
	const url = "memory:?token=memo"
	sc := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		return scenarios.Result{Verdict: reports.Pass, Ops: 1, Reason: "opened memory:?token=memo"}
	})
	// memory: takes no query: the run is NOT RUN with a reason that
	// quotes the URL's query ("got \"?token=memo\"").
	var k keys
	runs := Execute(context.Background(), Plan{Entries: []Entry{{Backend: url, Scenario: sc, Seed: 1}}, Out: t.TempDir()}, &k).Runs
	if strings.Contains(runs[0].Reason, "token=memo") {
		t.Errorf("reason %q holds the token", runs[0].Reason)
	}
	if len(k.started) != 1 || len(k.finished) != 1 || k.started[0] != k.finished[0] {
		t.Errorf("started as %q, finished as %q: progress cannot match them", k.started, k.finished)
	}
}

// Runs that an interrupt keeps from starting are finished INTERRUPTED
// without being announced as started: "started" for a run the summary
// says was "not started" misleads whoever reads the progress.
func TestUnstartedRunsAreNotAnnounced(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc := scenario(func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	})
	var k keys
	runs := Execute(ctx, Plan{Entries: []Entry{{Backend: "memory:", Scenario: sc, Seed: 1}, {Backend: "memory:", Scenario: sc, Seed: 2}}, Out: t.TempDir()}, &k).Runs
	for _, r := range runs {
		if r.Verdict != reports.Interrupted {
			t.Errorf("verdict %s, want %s", r.Verdict, reports.Interrupted)
		}
	}
	if len(k.started) != 0 || len(k.finished) != 2 {
		t.Errorf("announced started %q, finished %q; want none started and both finished", k.started, k.finished)
	}
}

// A $TMPDIR that names no folder does not refuse a {dir} URL: its runs
// get folders of their own in the run folder, not under $TMPDIR.
func TestInspectableWithoutATempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	u := Inspectable("sqlite:" + DirPlaceholder + "/x.db")
	if _, err := scenarios.TargetFor(u); err != nil {
		t.Errorf("sqlite:%s/x.db with TMPDIR naming nothing: %v", DirPlaceholder, err)
	}
}
