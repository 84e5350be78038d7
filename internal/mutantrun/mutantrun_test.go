package mutantrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/chaos/lossyfs"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// ciScenarios are the catalogue's two real scenarios, conformance first, so
// that with StopAtCatch only the mutants it cannot see reach the concurrent
// scenario (whose checker is slowest on the histories of mutants the
// sequential suite already catches).
func ciScenarios() []scenarios.Scenario {
	list, err := DefaultScenarios()
	if err != nil {
		panic(err)
	}
	return list
}

// ciSubjects are the subjects whose detection this machine can show: without
// FUSE (no root, no /dev/fuse) power-loss cannot run, so the mutant only it
// catches is left out, and said so, rather than reported as a survivor.
func ciSubjects(t *testing.T) ([]Subject, []scenarios.Scenario) {
	subjects, scs := Subjects(), ciScenarios()
	err := lossyfs.Available()
	if err == nil {
		return subjects, scs
	}
	t.Logf("NOT RUN: power-loss and unsynced-full, which only it catches: %v", err)
	subjects = slices.DeleteFunc(subjects, func(s Subject) bool { return s.Name == "unsynced-full" })
	scs = slices.DeleteFunc(scs, func(sc scenarios.Scenario) bool { return sc.Name == "power-loss" })
	return subjects, scs
}

// ciSizing is the default sizing with minimisation cut short, to keep CI
// quick: these tests assert what is caught and by which scenario, not how
// short the minimal sequence gets (storecheck mutants shrinks in full).
// With 10 shrink runs instead of 100, TestEveryMutantCaught's three seeds
// took 38 s of CPU instead of 53 s (one after the other, 2026-12-01).
func ciSizing() Sizing {
	s := DefaultSizing()
	s.ShrinkRuns = 10
	return s
}

// onlyCaughtBy names, for the mutants that one scenario alone can see, that
// scenario and the guarantee it finds broken: torn-replica's own writes
// read back whole (the sequential suite passes it), and only the prefix
// rule over a replica's reads of several tables sees it torn; short-sync's
// own writes read back too, and only the concurrent heal, which syncs every
// replica and loads every execution, finds it short of the primary;
// seq-before-tx numbers one client's commits in order (the sequential suite
// passes it), and only the concurrent check of the queues' order across
// executions sees it.
var onlyCaughtBy = map[string][2]string{
	"torn-replica":  {"concurrent", "replica read"},
	"short-sync":    {"concurrent", "replica convergence"},
	"seq-before-tx": {"concurrent", "delivery order"},
	// The third blind hunt's (docs/DETECTION.md): a replica that goes back
	// every other read, one whose is_processed is answered by the primary,
	// one whose sync stops inside a commit, one that reports a position it
	// does not serve, and one that syncs one shard of its executions at a
	// time (its heal sync leaves the other behind).
	"flip-flop":      {"concurrent", "replica read"},
	"mixed-source":   {"concurrent", "replica read"},
	"mid-txn-stop":   {"concurrent", "atomicity"},
	"position-ahead": {"concurrent", "replica convergence"},
	"sharded-apply":  {"concurrent", "replica convergence"},
}

// Every mutant is caught and no correct backend is flagged, at three seeds,
// so that a false positive would show; a mutant of onlyCaughtBy is caught
// by its scenario, for its guarantee.
func TestEveryMutantCaught(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			subjects, scs := ciSubjects(t)
			hunt := map[string]bool{}
			for _, h := range huntSubjects() {
				hunt[h.Name] = true
			}
			if seed > 1 {
				// The third blind hunt's ten run at seed 1 only: at three
				// seeds they took this package from 62 to 110 s (load 7–8);
				// docs/DETECTION.md gives their rates over seeds 1–20.
				subjects = slices.DeleteFunc(subjects, func(s Subject) bool { return hunt[s.Name] })
			}
			tab, _, err := Runner{Subjects: subjects, Scenarios: scs, Sizing: ciSizing(), Seed: seed, StopAtCatch: true, Budget: time.Minute, TempDir: t.TempDir()}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := tab.Write(&b); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + b.String())
			retried := catchOnRetry(t, tab, seed)
			survivors := slices.DeleteFunc(tab.Survivors(), func(name string) bool { _, ok := retried[name]; return ok })
			if len(survivors) > 0 || len(tab.Flagged()) > 0 || tab.Interrupted {
				t.Errorf("survivors %v, flagged %v", survivors, tab.Flagged())
				for _, row := range tab.Rows {
					for _, r := range row.Runs {
						if r.Verdict == reports.Fail && row.Kind == Correct || r.Verdict == reports.NotRun && !strings.HasPrefix(r.Reason, "skipped:") {
							t.Errorf("%s %s: %s: %s", row.Name, r.Scenario, r.Verdict, r.Reason)
						}
					}
				}
			}
			if len(tab.Rows) != len(subjects) {
				t.Errorf("%d rows, want one per subject (%d)", len(tab.Rows), len(subjects))
			}
			for name, want := range onlyCaughtBy {
				row, ok := tab.Row(name)
				if r, again := retried[name]; again {
					row = r
				}
				switch {
				case !ok && hunt[name] && seed > 1:
				case !ok:
					t.Errorf("%s is not in the catalogue", name)
				case row.By == nil || row.By.Scenario != want[0] || row.By.Guarantee != want[1]:
					t.Errorf("%s: caught by %+v, want %s (%s)", name, row.By, want[0], want[1])
				}
			}
		})
	}
}

// retrySeeds is how many more seeds a mutant whose catch rests on the
// concurrent workload's timing gets when it survives a seed: its catch
// needs two clients to meet inside its window, which a run on a machine
// busy with the other test binaries sometimes does not bring (seq-before-tx
// survived seed 1 once in a clean clone's make test, 2026-12-04, caught
// 300 of 300 in-process the session before; docs/DETECTION.md gives the
// rates). A mutant missed at its seed and every retry is a survivor.
const retrySeeds = 2

// catchOnRetry runs each survivor of tab that only the concurrent
// scenario catches (onlyCaughtBy) again, on concurrent alone, at up to
// retrySeeds seeds of its own (100·seed+k, none of the test's), and
// returns the rows of those caught, by name. Each retry is logged.
func catchOnRetry(t *testing.T, tab *Table, seed uint64) map[string]Row {
	t.Helper()
	caught := map[string]Row{}
	conc, err := scenarios.Lookup("concurrent")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tab.Survivors() {
		if want, ok := onlyCaughtBy[name]; !ok || want[0] != "concurrent" {
			continue
		}
		subjects, err := Select(Subjects(), []string{name})
		if err != nil {
			t.Fatal(err)
		}
		for k := uint64(1); k <= retrySeeds; k++ {
			again, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{conc}, Sizing: ciSizing(), Seed: 100*seed + k, Budget: time.Minute, TempDir: t.TempDir()}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			row, _ := again.Row(name)
			t.Logf("%s survived seed %d; retry at seed %d: caught %v", name, seed, 100*seed+k, row.Caught)
			if row.Caught {
				caught[name] = row
				break
			}
		}
	}
	return caught
}

// The table records misses: with only the concurrent scenario, mutants
// that only the sequential suite can see survive, and the catalogue fails.
func TestTableRecordsMisses(t *testing.T) {
	subjects, err := Select(Subjects(), []string{"trace-off-by-one", "page-skip", "read-check-write", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{concurrentScenario()}, Seed: 7}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tab.Pass() || tab.Passed {
		t.Error("the catalogue passed with surviving mutants")
	}
	if got := fmt.Sprint(tab.Survivors()); got != "[trace-off-by-one page-skip]" {
		t.Errorf("survivors %s, want [trace-off-by-one page-skip]", got)
	}
	if row, _ := tab.Row("read-check-write"); !row.Caught || row.By == nil || row.By.Guarantee != "lost update" {
		t.Errorf("read-check-write: %+v", row)
	}
	if row, _ := tab.Row("memory"); row.Caught || !row.OK() {
		t.Errorf("memory flagged: %+v", row)
	}
	var b strings.Builder
	if err := tab.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trace-off-by-one", "NO", "FAIL: survivors trace-off-by-one, page-skip, flagged none"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table does not show %q:\n%s", want, b.String())
		}
	}
}

// The real conformance scenario, through scenarios.Lookup, two runs at a
// time: the run is measured up to the failing case, the minimal sequence
// is kept, the summary has one run per subject × scenario with derived
// seeds, and the table and summary say how many runs went at once.
func TestRealScenarios(t *testing.T) {
	subjects, err := Select(Subjects(), []string{"version-not-restored", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	tab, _, err := Runner{Subjects: subjects, Seed: 3, OutDir: out, Parallel: 2}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Pass() {
		t.Fatalf("survivors %v, flagged %v", tab.Survivors(), tab.Flagged())
	}
	row, _ := tab.Row("version-not-restored")
	by := row.By
	if by == nil || by.Scenario != "conformance" || by.Guarantee != "model conformance" {
		t.Fatalf("caught by %+v", by)
	}
	if by.MinimalLength() < 1 || by.OpsToCatch < 1 || by.OpsToCatch > by.Ops || by.TimeToCatch > by.Time {
		t.Errorf("minimal %d, ops to catch %d of %d, time to catch %v of %v", by.MinimalLength(), by.OpsToCatch, by.Ops, by.TimeToCatch, by.Time)
	}
	sum := tab.Summary("storecheck mutants --seed 3")
	if len(sum.Runs) != 2*len(tab.Scenarios) || sum.Seed != 3 {
		t.Fatalf("summary: %+v", sum)
	}
	if sum.Parallel == nil || sum.Parallel.Runs != 2 {
		t.Errorf("the summary says %+v runs went at once, want 2: its times to catch are a shared machine's", sum.Parallel)
	}
	var text strings.Builder
	if err := tab.Write(&text); err != nil || !strings.Contains(text.String(), "; 2 runs at once, timed runs one at a time\n") {
		t.Errorf("the table does not say how many runs went at once (%v):\n%s", err, text.String())
	}
	for _, r := range sum.Runs {
		if (r.Scenario == "power-loss" || r.Scenario == "crash-recovery") && !r.NotApplicable {
			t.Errorf("%s on %s (no file) is not marked not applicable: %+v", r.Scenario, r.Backend, r)
		}
		if r.NotApplicable {
			continue
		}
		if r.Seed != DeriveSeed(3, r.Scenario) || !strings.Contains(r.Reproduce, fmt.Sprint(r.Seed)) || r.Dir == "" {
			t.Errorf("run %+v", r)
		}
		// replay says "same plan" only against the original's digest.
		if r.SequenceDigest == "" {
			t.Errorf("%s on %s records no sequence digest: a replay of it cannot say whether it ran the same plan", r.Scenario, r.Backend)
		}
	}
	b, err := json.Marshal(tab)
	if err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != 2 || !back.Passed {
		t.Errorf("mutants.json round trip: %v %+v", err, back)
	}
}

func TestSelect(t *testing.T) {
	got, err := Select(Subjects(), []string{"sqlite", "blind-write"})
	if err != nil || len(got) != 2 || got[0].Name != "blind-write" {
		t.Errorf("Select = %v, %v", got, err)
	}
	_, err = Select(Subjects(), []string{"nope"})
	if err == nil || !strings.Contains(err.Error(), `unknown catalogue entry "nope" (known: blind-write,`) || !strings.Contains(err.Error(), "guarded-upsert") {
		t.Errorf("error %v", err)
	}
}

func TestDeriveSeed(t *testing.T) {
	a, b := DeriveSeed(1, "conformance"), DeriveSeed(1, "concurrent")
	if a == 0 || b == 0 || a == b || a != DeriveSeed(1, "conformance") || a == DeriveSeed(2, "conformance") {
		t.Errorf("seeds %d %d", a, b)
	}
}

// concurrentScenario is the real concurrent scenario.
func concurrentScenario() scenarios.Scenario {
	sc, err := scenarios.Lookup("concurrent")
	if err != nil {
		panic(err)
	}
	return sc
}

// A correct backend that a scenario could not run is not "not flagged": the
// catalogue does not pass on a check that never happened.
func TestCorrectBackendNotRunFailsCatalogue(t *testing.T) {
	subjects, err := Select(Subjects(), []string{"blind-write", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	cannot := scenarios.Scenario{Name: "cannot", Run: func(_ context.Context, tg scenarios.Target, _ scenarios.Params) scenarios.Result {
		if strings.HasPrefix(tg.URL, "mutant:") {
			return scenarios.Result{Verdict: reports.Fail, Reason: "caught", Ops: 1}
		}
		return scenarios.Result{Verdict: reports.NotRun, Reason: "the server could not start"}
	}}
	tab, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{cannot}, Seed: 1}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tab.Pass() {
		t.Fatal("the catalogue passed although the correct backend never ran")
	}
	if got := fmt.Sprint(tab.Unchecked()); got != "[memory]" {
		t.Errorf("unchecked %s, want [memory]", got)
	}
}

// interruptingScenarios are two fake scenarios: "first" catches the mutant
// named catch and passes everything else; "second" passes, except on the
// subject named stopAt, where it interrupts the catalogue (as Ctrl-C would).
func interruptingScenarios(catch, stopAt string, cancel context.CancelFunc) []scenarios.Scenario {
	first := scenarios.Scenario{Name: "first", Run: func(_ context.Context, tg scenarios.Target, _ scenarios.Params) scenarios.Result {
		if strings.HasPrefix(tg.URL, "mutant:"+catch) {
			return scenarios.Result{Verdict: reports.Fail, Reason: "caught", Ops: 1}
		}
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	}}
	second := scenarios.Scenario{Name: "second", Run: func(_ context.Context, tg scenarios.Target, _ scenarios.Params) scenarios.Result {
		if strings.HasPrefix(tg.URL, "mutant:"+stopAt) || tg.URL == stopAt+":" {
			cancel()
			return scenarios.Result{Verdict: reports.Interrupted, Reason: "interrupted"}
		}
		return scenarios.Result{Verdict: reports.Pass, Ops: 1}
	}}
	return []scenarios.Scenario{first, second}
}

// orderedSubjects are the named catalogue entries in the order given.
func orderedSubjects(t *testing.T, names ...string) []Subject {
	var out []Subject
	for _, n := range names {
		s, err := Select(Subjects(), []string{n})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s...)
	}
	return out
}

// A catalogue interrupted before a mutant's scenarios finished does not
// call it a survivor, nor a correct backend it never got to unchecked: both
// are INTERRUPTED, and so is the verdict; a mutant caught before the
// interruption stays caught.
func TestInterruptedSubjectsAreNotSurvivors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subjects := orderedSubjects(t, "blind-write", "page-skip", "memory")
	tab, _, err := Runner{Subjects: subjects, Scenarios: interruptingScenarios("blind-write", "blind-write", cancel), Seed: 1, Parallel: 1}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Interrupted || tab.Pass() {
		t.Fatalf("interrupted %v, passed %v", tab.Interrupted, tab.Passed)
	}
	if s, u := tab.Survivors(), tab.Unchecked(); len(s) > 0 || len(u) > 0 {
		t.Errorf("survivors %v, unchecked %v: want none, their runs were interrupted", s, u)
	}
	if got := fmt.Sprint(tab.Undecided()); got != "[page-skip memory]" {
		t.Errorf("undecided %s, want [page-skip memory]", got)
	}
	if row, _ := tab.Row("blind-write"); !row.Caught || row.Undecided() {
		t.Errorf("blind-write, caught before the interruption: %+v", row)
	}
	if v := tab.Verdict(); v != reports.Interrupted {
		t.Errorf("verdict %s, want INTERRUPTED", v)
	}
	var b strings.Builder
	if err := tab.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"page-skip mutant INTERRUPTED", "memory correct INTERRUPTED"} {
		if !hasRowLine(b.String(), want) {
			t.Errorf("table has no row %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(b.String(), "INTERRUPTED: no outcome for page-skip, memory") {
		t.Errorf("verdict line does not say INTERRUPTED:\n%s", b.String())
	}
	if strings.Contains(b.String(), "survivors") || strings.Contains(b.String(), " NO ") {
		t.Errorf("table calls an interrupted mutant a survivor:\n%s", b.String())
	}
}

// A mutant every scenario ran without catching is a survivor even when the
// catalogue was interrupted later: the failure found outranks the
// interruption, as in a summary of runs.
func TestSurvivorBeforeInterruptionFails(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subjects := orderedSubjects(t, "blind-write", "page-skip", "memory")
	tab, _, err := Runner{Subjects: subjects, Scenarios: interruptingScenarios("blind-write", "memory", cancel), Seed: 1, Parallel: 1}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tab.Survivors()); got != "[page-skip]" {
		t.Errorf("survivors %s, want [page-skip]", got)
	}
	if got := fmt.Sprint(tab.Undecided()); got != "[memory]" {
		t.Errorf("undecided %s, want [memory]", got)
	}
	if v := tab.Verdict(); v != reports.Fail || !tab.Interrupted {
		t.Errorf("verdict %s, interrupted %v: want FAIL, interrupted", v, tab.Interrupted)
	}
}

// hasRowLine reports whether a line of table starts with the words of
// prefix, however the columns are padded.
func hasRowLine(table, prefix string) bool {
	want := strings.Fields(prefix)
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
			return true
		}
	}
	return false
}

// A catalogue whose mutants all survive exits 1, but each of its runs is a
// PASS: its summary carries the gate, so that summary.md says GATE FAILED
// and junit.xml, read by a CI system, holds a failing case instead of
// only passing ones. A catalogue that passes says so with exit code 0.
func TestSurvivorsFailTheReports(t *testing.T) {
	subjects, err := Select(Subjects(), []string{"trace-off-by-one", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{concurrentScenario()}, Seed: 7}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := tab.Summary("storecheck mutants --only trace-off-by-one,memory")
	sum.Verdict = tab.Verdict()
	if g := sum.Gate; g == nil || g.ExitCode != reports.ExitFailed || !strings.Contains(g.Headline, "survivors trace-off-by-one") {
		t.Fatalf("gate %+v; want exit 1 naming the survivor", g)
	}
	dir := t.TempDir()
	if err := reports.WriteJSON(filepath.Join(dir, reports.SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	if err := reports.Render(dir); err != nil {
		t.Fatal(err)
	}
	junit, err := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(junit), `<testsuites name="storecheck" tests="2" failures="0" errors="0"`) && !strings.Contains(string(junit), "survivors trace-off-by-one") {
		t.Errorf("junit.xml of a failed catalogue reads as passing:\n%s", junit)
	}
	if !strings.Contains(string(junit), `<failure message="survived: no scenario caught this mutant" type="survived">`) {
		t.Errorf("junit.xml does not fail the survivor's run as survived:\n%s", junit)
	}
	// A catalogue that passes: its mutant's runs FAIL, as they must, and
	// junit.xml, which a CI system shows, has no failing case; it says
	// what caught the mutant.
	caught, err := Select(Subjects(), []string{"read-check-write", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err = Runner{Subjects: caught, Scenarios: []scenarios.Scenario{concurrentScenario()}, Seed: 7}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum = tab.Summary("storecheck mutants --only read-check-write,memory")
	if g := sum.Gate; g == nil || g.ExitCode != reports.ExitPassed || !strings.HasPrefix(g.Headline, "PASS") {
		t.Errorf("a caught mutant: gate %+v; want exit 0, PASS", g)
	}
	for _, r := range sum.Runs {
		if want := map[string]reports.Verdict{"mutant:read-check-write": reports.Fail}[r.Backend]; r.Expect != want {
			t.Errorf("%s: expect %q, want %q", r.Backend, r.Expect, want)
		}
	}
	dir = t.TempDir()
	if err := reports.WriteJSON(filepath.Join(dir, reports.SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	if err := reports.Render(dir); err != nil {
		t.Fatal(err)
	}
	if junit, err = os.ReadFile(filepath.Join(dir, reports.JUnitFile)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `<testsuites name="storecheck" tests="2" failures="0" errors="0"`) || !strings.Contains(string(junit), "<system-out>caught: lost update") {
		t.Errorf("junit.xml of a catalogue that passed has a failing case, or does not say what caught the mutant:\n%s", junit)
	}
}

// A reproduce line is a shell command: a subject's URL with a query ('?'
// globs in every shell, zsh refuses it unmatched; '&' ends a command) is
// quoted as `storecheck run` quotes its own.
func TestReproduceQuotesTheBackend(t *testing.T) {
	tab := &Table{Seed: 1, Sizing: Sizing{Checks: 100, Steps: 30, Clients: 16, Executions: 2, Ops: 1000}, Rows: []Row{{Name: "unsynced-full", Kind: Mutant,
		Runs: []RunResult{{Scenario: "power-loss", Seed: 5, Backend: "mutant:unsynced-full?path={dir}/store.db", Verdict: reports.Fail}}}}}
	got := tab.Summary("storecheck mutants").Runs[0].Reproduce
	if want := "storecheck run --backend 'mutant:unsynced-full?path={dir}/store.db' --scenario power-loss --seed 5 "; !strings.HasPrefix(got, want) {
		t.Errorf("reproduce %q\nwant it to start with %q", got, want)
	}
}

// The concurrent histories hold a replica's listings to what acks removed
// (linearizability/removed.go): keeps-deleted (others' acks never reach its
// listings) and ryw-commits-only (no sync after its own acks) are caught by
// concurrent alone, as replica reads, although the sequential suite, which
// the catalogue runs first, usually catches them before (its resets, its
// read_trace after append_trace).
func TestConcurrentHoldsReplicaListingsToAcks(t *testing.T) {
	subjects, err := Select(Subjects(), []string{"keeps-deleted", "ryw-commits-only"})
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{concurrentScenario()}, Sizing: ciSizing(), Seed: 1, TempDir: t.TempDir()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subjects {
		row, ok := tab.Row(s.Name)
		if !ok || row.By == nil || row.By.Guarantee != "replica read" {
			t.Errorf("%s: caught by %+v, want concurrent (replica read)", s.Name, row.By)
		}
	}
}

// TestRetryCatchesARaceSurvivor: a concurrent-only mutant that survived
// (here: run on conformance alone, which never sees it) is caught by
// catchOnRetry's concurrent runs; a mutant conformance catches is not
// retried.
func TestRetryCatchesARaceSurvivor(t *testing.T) {
	subjects, err := Select(Subjects(), []string{"seq-before-tx", "blind-write"})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := scenarios.Lookup("conformance")
	if err != nil {
		t.Fatal(err)
	}
	tab, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{conf}, Sizing: ciSizing(), Seed: 1, TempDir: t.TempDir()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Survivors(); !slices.Equal(got, []string{"seq-before-tx"}) {
		t.Fatalf("survivors of conformance alone %v; want [seq-before-tx]", got)
	}
	retried := catchOnRetry(t, tab, 1)
	row, ok := retried["seq-before-tx"]
	if len(retried) != 1 || !ok || row.By == nil || row.By.Scenario != "concurrent" {
		t.Errorf("retried %+v; want seq-before-tx caught by concurrent", retried)
	}
}
