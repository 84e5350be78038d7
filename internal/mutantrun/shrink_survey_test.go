package mutantrun

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// TestShrinkSurvey is a measurement, not a check CI runs: with
// STORECHECK_SHRINK_SURVEY=FIRST-LAST (base seeds, as `storecheck mutants
// --seed N`), it runs conformance against every mutant of the catalogue at
// each seed with the default shrink budget and logs, per mutant and seed,
// the minimal sequence's step count, the re-run that first confirmed a
// sequence that short (shortest_at_run), the one that confirmed the
// sequence reported (minimal_at_run) and the re-runs made; with STORECHECK_SHRINK_BOUND=N as
// well, it runs them again with a shrink budget of N and fails when a
// minimal sequence differs from the default budget's in any line. It is
// how the catalogue's shrink budget was chosen (docs/PERFORMANCE.md).
func TestShrinkSurvey(t *testing.T) {
	spec := os.Getenv("STORECHECK_SHRINK_SURVEY")
	if spec == "" {
		t.Skip("NOT RUN: a measurement; set STORECHECK_SHRINK_SURVEY=FIRST-LAST (and STORECHECK_SHRINK_BOUND=N to compare a budget)")
	}
	first, last, err := seedRange(spec)
	if err != nil {
		t.Fatal(err)
	}
	bound := 0
	if b := os.Getenv("STORECHECK_SHRINK_BOUND"); b != "" {
		if bound, err = strconv.Atoi(b); err != nil || bound < 1 {
			t.Fatalf("STORECHECK_SHRINK_BOUND=%q: want a positive count", b)
		}
	}
	conf, err := scenarios.Lookup("conformance")
	if err != nil {
		t.Fatal(err)
	}
	var mutants []Subject
	for _, s := range Subjects() {
		if s.Kind == Mutant {
			mutants = append(mutants, s)
		}
	}
	run := func(seed uint64, shrink int) *Table {
		sz := DefaultSizing()
		sz.ShrinkRuns = shrink
		table, _, err := Runner{Subjects: mutants, Scenarios: []scenarios.Scenario{conf}, Seed: seed, Sizing: sz, TempDir: t.TempDir()}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return table
	}
	worst := 0
	for seed := first; seed <= last; seed++ {
		start := time.Now()
		def := run(seed, 0)
		took := time.Since(start)
		var bounded *Table
		if bound > 0 {
			start = time.Now()
			bounded = run(seed, bound)
			t.Logf("seed %d: conformance over %d mutants %.1f s with the default budget, %.1f s with %d", seed, len(mutants), took.Seconds(), time.Since(start).Seconds(), bound)
		}
		for i, row := range def.Rows {
			r := row.Runs[0]
			if r.Verdict != reports.Fail {
				continue
			}
			at := int(r.Metrics["shortest_at_run"])
			worst = max(worst, at)
			line := fmt.Sprintf("seed %d %-22s minimal %2d steps, first that short at re-run %3d, the case reported at %3d of %3d", seed, row.Name, int(r.Metrics["minimal_steps"]), at, int(r.Metrics["minimal_at_run"]), int(r.Metrics["shrink_runs"]))
			if bounded != nil {
				b := bounded.Rows[i].Runs[0]
				same := b.Verdict == r.Verdict && slices.Equal(b.MinimalSteps, r.MinimalSteps)
				line += fmt.Sprintf("; budget %d: %s, minimal %2d steps, same sequence %v", bound, b.Verdict, int(b.Metrics["minimal_steps"]), same)
				if !same {
					t.Errorf("seed %d %s: budget %d gives\n  %s\nthe default gives\n  %s", seed, row.Name, bound,
						strings.Join(b.MinimalSteps, "\n  "), strings.Join(r.MinimalSteps, "\n  "))
				}
			}
			t.Log(line)
		}
	}
	t.Logf("the latest re-run to reach a minimal length, over seeds %d-%d: %d", first, last, worst)
}

// seedRange reads FIRST-LAST (or one seed).
func seedRange(spec string) (uint64, uint64, error) {
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.ParseUint(a, 10, 64)
	last, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || first < 1 || last < first {
		return 0, 0, fmt.Errorf("STORECHECK_SHRINK_SURVEY=%q: want FIRST-LAST, positive seeds", spec)
	}
	return first, last, nil
}
