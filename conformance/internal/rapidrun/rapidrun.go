// Package rapidrun runs a rapid property outside `go test`, for the
// conformance engine's Check (what the CLI calls, for either contract): it
// points rapid at a seed and a budget, captures everything rapid and the
// property log through a rapid.TB of its own, and picks out the failure and
// the minimal failing sequence.
package rapidrun

import (
	"flag"
	"fmt"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Config sets how the property runs.
type Config struct {
	Name       string        // the name rapid reports the property under
	Seed       uint64        // rapid's base seed; 0 is not allowed (rapid would pick one at random)
	Checks     int           // test cases to run; 0 means 100
	Steps      int           // average actions per test case; 0 means 30
	ShrinkTime time.Duration // bound on minimisation; 0 means 30s
	// ShrinkRuns, when set, bounds minimisation by the test cases it runs
	// after the first failure; see shrinkBudget.
	ShrinkRuns int
	// CaseLog, when set, returns the lines the property logged in the test
	// case now running (its "step: …" lines). With ShrinkRuns it is how the
	// smallest failing case found so far is reported when the budget ends
	// minimisation early.
	CaseLog func() []string
}

// Outcome is what the run showed.
type Outcome struct {
	Passed bool
	// Failure is rapid's failure message; MinimalSteps the lines the final,
	// shrunk re-run logged: the property's "step: …" lines and the failed
	// comparison that ended it.
	Failure      string
	MinimalSteps []string
	// Output is everything rapid and the property logged.
	Output []string
	// ShrinkRuns is how many test cases minimisation re-ran (rapid's last
	// run, which logs the minimal case, not counted), and MinimalAt the
	// re-run that confirmed the case reported (0: the first failure was
	// never made smaller). With a shrink budget of N, any budget of at
	// least MinimalAt reports the same case. ShortestAt is the re-run that
	// confirmed the first case of the length (CaseLog lines) the cases
	// confirmed since all have: a budget of at least ShortestAt reports a
	// case as long as that one, perhaps with larger values in its steps.
	// All three are 0 without a budget.
	ShrinkRuns, MinimalAt, ShortestAt int
}

// Run runs prop under cfg. The error is for a run that could not start.
// Runs whose settings differ only in their seed go side by side; others
// wait for the runs going to end (gate).
func Run(cfg Config, prop func(*rapid.T)) (Outcome, error) {
	if cfg.Seed == 0 {
		return Outcome{}, fmt.Errorf("%s: seed must be non-zero (rapid treats 0 as random)", cfg.Name)
	}
	seedRead, leave, err := gate.enter(cfg)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	defer leave()
	tb := &captureTB{name: cfg.Name}
	var budget *shrinkBudget
	if cfg.ShrinkRuns > 0 {
		budget = &shrinkBudget{runs: cfg.ShrinkRuns, tb: tb, caseLog: cfg.CaseLog}
		prop = budget.wrap(prop)
	}
	inner := prop
	prop = func(t *rapid.T) {
		seedRead() // rapid reads the seed before it first calls the property
		inner(t)
	}
	// rapid runs on a goroutine of its own so that the budget can end it
	// (runtime.Goexit) from inside the property: rapid's shrinker cannot be
	// stopped any other way, and candidates skipped instead pile up in its
	// cache until the wall-clock bound.
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil && r != errStop {
				tb.Errorf("panic: %v", r)
			}
		}()
		rapid.Check(tb, prop)
	}()
	<-done
	if budget != nil && budget.stopped {
		budget.report()
	}
	out := Outcome{Passed: !tb.Failed(), Output: tb.lines}
	if !out.Passed {
		out.Failure, out.MinimalSteps = tb.failure()
	}
	if budget != nil && budget.failed {
		out.ShrinkRuns, out.MinimalAt, out.ShortestAt = min(budget.after, budget.runs), budget.bestAt, budget.shortAt
	}
	return out, nil
}

// setFlags points rapid at cfg through the process flag set, and returns the
// function that puts the previous values back. Only while no run goes
// (gate).
func setFlags(cfg Config) (func(), error) {
	if flag.Lookup("test.v") == nil {
		testing.Init() // rapid calls testing.Short, which needs the test flags
	}
	if !flag.Parsed() {
		if err := flag.CommandLine.Parse(nil); err != nil {
			return nil, err
		}
	}
	want := flagValues(cfg)
	old := map[string]string{}
	for name, v := range want {
		f := flag.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("rapid flag -%s not registered", name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			return nil, fmt.Errorf("set -%s: %w", name, err)
		}
	}
	return func() {
		for name, v := range old {
			_ = flag.Set(name, v)
		}
	}, nil
}

// flagValues is what setFlags sets rapid's flags to for cfg. A Config
// says how many test cases and steps run, also in a test binary run with
// go test -short, where rapid runs a fifth of rapid.checks and half of
// rapid.steps: there, the flags ask for five and two times as many, which
// rapid's integer divisions take back exactly.
func flagValues(cfg Config) map[string]string {
	set := settingsOf(cfg)
	checks, steps := set.checks, set.steps
	if testing.Short() {
		checks, steps = checks*5, steps*2
	}
	return map[string]string{
		"rapid.seed":       strconv.FormatUint(cfg.Seed, 10),
		"rapid.checks":     strconv.Itoa(checks),
		"rapid.steps":      strconv.Itoa(steps),
		"rapid.shrinktime": set.shrinkTime.String(),
		"rapid.nofailfile": "true", // no testdata/rapid folder in the user's directory
	}
}

// setSeed points rapid at seed alone, the other flags left as setFlags
// set them.
func setSeed(seed uint64) error {
	if err := flag.Set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
		return fmt.Errorf("set -rapid.seed: %w", err)
	}
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
