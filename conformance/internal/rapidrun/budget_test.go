package rapidrun

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A property that fails on any list holding a number over 1000, with a log
// of its own like the engine's steps.
func failingProperty(calls *int, log *[]string) func(*rapid.T) {
	return func(t *rapid.T) {
		*calls++
		*log = nil
		xs := rapid.SliceOfN(rapid.IntRange(0, 1<<20), 20, 60).Draw(t, "xs")
		for i, x := range xs {
			line := fmt.Sprintf("step: %d", x)
			*log = append(*log, line)
			t.Log(line)
			if x > 1000 {
				t.Fatalf("element %d is %d, over 1000", i, x)
			}
		}
	}
}

// The budget stops minimisation after the runs it allows, however much
// wall-clock time is left, and reports the smallest failing case rapid had
// confirmed, with its message and steps.
func TestShrinkBudgetStopsRapidAndReportsTheSmallestCase(t *testing.T) {
	calls, log := 0, []string(nil)
	out, err := Run(Config{Name: "budget", Seed: 5, Checks: 50, ShrinkRuns: 10, CaseLog: func() []string { return append([]string(nil), log...) }},
		failingProperty(&calls, &log))
	if err != nil {
		t.Fatal(err)
	}
	if out.Passed {
		t.Fatal("a failing property passed")
	}
	if !strings.Contains(out.Failure, "over 1000") || !strings.Contains(strings.Join(out.Output, "\n"), "minimisation stopped after 10 test cases") {
		t.Errorf("failure %q does not report the stopped minimisation; output:\n%s", out.Failure, strings.Join(out.Output, "\n"))
	}
	if calls > 1+11 {
		// the first failure is the first test case at this seed and size
		t.Errorf("%d test cases ran, want at most the failing one and the 10 (+1 that is stopped) of the budget", calls)
	}
	last := out.MinimalSteps[len(out.MinimalSteps)-1]
	if !strings.Contains(last, "over 1000") || len(out.MinimalSteps) < 2 {
		t.Errorf("minimal steps %q do not end with the failure", out.MinimalSteps)
	}
}

// With budget to spare, rapid finishes and reports as it always does: the
// same seed gives the same minimal case.
func TestShrinkBudgetLeavesAFinishedShrinkAlone(t *testing.T) {
	var steps [2][]string
	for i := range steps {
		calls, log := 0, []string(nil)
		out, err := Run(Config{Name: "budget", Seed: 5, Checks: 50, ShrinkRuns: 100000, CaseLog: func() []string { return log }}, failingProperty(&calls, &log))
		if err != nil || out.Passed {
			t.Fatalf("run %d: err %v passed %v", i, err, out.Passed)
		}
		if strings.Contains(strings.Join(out.Output, "\n"), "minimisation stopped") {
			t.Errorf("run %d: a finished shrink reported as stopped", i)
		}
		steps[i] = out.MinimalSteps
	}
	if strings.Join(steps[0], "|") != strings.Join(steps[1], "|") {
		t.Errorf("same seed, different minimal cases:\n%q\n%q", steps[0], steps[1])
	}
}

// FailureMessage reads the message rapid keeps unexported; this pins it to
// the rapid version go.mod names.
func TestFailureMessageReadsRapidsField(t *testing.T) {
	var got string
	_, _ = Run(Config{Name: "field", Seed: 1, Checks: 1}, func(rt *rapid.T) {
		defer func() { got = FailureMessage(rt) }()
		rt.Fatalf("the message")
	})
	if got != "the message" {
		t.Errorf("FailureMessage = %q, want %q", got, "the message")
	}
}

// TestShrinkBudgetSaysWhereTheMinimalCaseWasFound: MinimalAt and ShortestAt
// are what they claim: a budget of MinimalAt re-runs reports the very case
// the full budget does, one of ShortestAt a case as long, and one of less
// than ShortestAt a longer case (when the first failure was shrunk at all).
func TestShrinkBudgetSaysWhereTheMinimalCaseWasFound(t *testing.T) {
	run := func(budget int) Outcome {
		t.Helper()
		calls, log := 0, []string(nil)
		out, err := Run(Config{Name: "budget", Seed: 5, Checks: 50, ShrinkRuns: budget, CaseLog: func() []string { return append([]string(nil), log...) }},
			failingProperty(&calls, &log))
		if err != nil || out.Passed {
			t.Fatalf("budget %d: err %v passed %v", budget, err, out.Passed)
		}
		return out
	}
	full := run(400)
	if !(0 < full.ShortestAt && full.ShortestAt <= full.MinimalAt && full.MinimalAt <= full.ShrinkRuns && full.ShrinkRuns <= 400) {
		t.Fatalf("want 0 < ShortestAt %d <= MinimalAt %d <= ShrinkRuns %d <= 400", full.ShortestAt, full.MinimalAt, full.ShrinkRuns)
	}
	if at := run(full.MinimalAt); !slices.Equal(at.MinimalSteps, full.MinimalSteps) {
		t.Errorf("a budget of MinimalAt (%d) reports\n%q\nthe full budget\n%q", full.MinimalAt, at.MinimalSteps, full.MinimalSteps)
	}
	if at := run(full.ShortestAt); len(at.MinimalSteps) != len(full.MinimalSteps) {
		t.Errorf("a budget of ShortestAt (%d) reports %d lines, the full budget %d", full.ShortestAt, len(at.MinimalSteps), len(full.MinimalSteps))
	}
	if full.ShortestAt < 2 {
		t.Fatalf("ShortestAt %d: this seed no longer shrinks in steps; pick one whose first failure is longer", full.ShortestAt)
	}
	if before := run(full.ShortestAt - 1); len(before.MinimalSteps) == len(full.MinimalSteps) {
		t.Errorf("a budget of ShortestAt-1 (%d) already reports %d lines: ShortestAt is not where that length was reached", full.ShortestAt-1, len(full.MinimalSteps))
	}
}
