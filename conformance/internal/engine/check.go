package engine

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/conformance/internal/rapidrun"
)

// Config sets how the property runs outside `go test`.
type Config struct {
	Seed   uint64 // rapid's base seed; 0 is not allowed (rapid would pick one at random)
	Checks int    // test cases to run; 0 means 100
	Steps  int    // average actions per test case; 0 means 30
	// ShrinkRuns bounds minimisation by the test cases it re-runs after
	// the first failure: past it, every further candidate is skipped, so
	// the same seed shrinks to the same sequence however loaded the
	// machine. 0 means DefaultShrinkRuns.
	ShrinkRuns int
	// ShrinkTime bounds minimisation in wall-clock time, a backstop for a
	// store so slow that the runs budget would take too long; 0 means
	// DefaultShrinkTime.
	ShrinkTime time.Duration
	// Stats, when set, receives the live counts (for a progress display).
	Stats *Stats
}

// Bounds of minimisation.
const (
	// DefaultShrinkRuns is enough re-runs for the mutants of the catalogue
	// to reach their shortest sequence (1 to 4 steps; rapid's shrinker took
	// 50 to 300 runs for them).
	DefaultShrinkRuns = 500
	// DefaultShrinkTime is the wall-clock backstop.
	DefaultShrinkTime = 5 * time.Minute
)

// Report is the outcome of Check.
type Report struct {
	Passed bool
	Cases  int64 // test cases started, including shrinking re-runs
	Ops    int64 // store operations compared
	// Digest identifies the sequence of steps that ran: the same seed gives
	// the same digest.
	Digest string
	// Failure is rapid's failure message; MinimalSteps the shrunk sequence,
	// one "step: …" line per operation, ending with the failed comparison.
	Failure      string
	MinimalSteps []string
	// Output is everything rapid and the property logged.
	Output []string
	// ShrinkRuns is how many test cases minimisation re-ran, and
	// MinimalAt the re-run that confirmed the MinimalSteps reported (0:
	// the first failure as found): any ShrinkRuns bound of at least
	// MinimalAt reports the same sequence for the same seed. ShortestAt is
	// the re-run that confirmed the first sequence of as many steps: any
	// bound of at least ShortestAt reports as many steps.
	ShrinkRuns, MinimalAt, ShortestAt int
	// Broken, when set, is the error that broke the store under test for
	// good (Stores.Broken): the check stopped at the test case that broke
	// it, without minimising. Failure is then that test case's failure and
	// MinimalSteps its steps, unshrunk.
	Broken error
}

// Check runs the state-machine property against stores from open, outside
// `go test`. The same seed gives the same sequences. The error reports a
// harness failure (the property could not run), not a failed check.
func (c Contract[S, C]) Check(ctx context.Context, open func(ctx context.Context, cfg C) (S, error), cfg Config) (Report, error) {
	h := NewHarness(c.Stores, open)
	defer h.Close()
	stats := cfg.Stats
	if stats == nil {
		stats = &Stats{}
	}
	shrinkTime := cfg.ShrinkTime
	if shrinkTime == 0 {
		shrinkTime = DefaultShrinkTime
	}
	runs := cfg.ShrinkRuns
	if runs == 0 {
		runs = DefaultShrinkRuns
	}
	run := rapidrun.Config{Name: c.Name, Seed: cfg.Seed, Checks: cfg.Checks, Steps: cfg.Steps, ShrinkTime: shrinkTime, ShrinkRuns: runs, CaseLog: stats.CaseSteps}
	stop := &brokenStop{}
	out, err := rapidrun.Run(run, c.property(ctx, h, stats, stop))
	if err != nil {
		return Report{}, err
	}
	rep := Report{Passed: out.Passed, Cases: stats.Cases.Load(), Ops: stats.Ops.Load(), Digest: stats.Digest(),
		Failure: out.Failure, MinimalSteps: out.MinimalSteps, Output: out.Output, ShrinkRuns: out.ShrinkRuns, MinimalAt: out.MinimalAt, ShortestAt: out.ShortestAt}
	if stop.err != nil {
		rep.Passed, rep.Broken = false, stop.err
		rep.Failure, rep.MinimalSteps = stop.failure, stop.steps
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("%s check interrupted: %w", c.Suite, err)
	}
	return rep, nil
}

// Property returns the rapid state-machine property: every test case takes
// an empty store from h, configured as DrawConfig draws, and repeats the
// actions Start returns. stats may be nil. ctx bounds the whole property:
// once it is done, every test case fails at once, so an interrupted run
// ends quickly.
func (c Contract[S, C]) Property(ctx context.Context, h *Harness[S, C], stats *Stats) func(*rapid.T) {
	return c.property(ctx, h, stats, nil)
}

// brokenStop is how Check stops at a store that broke for good: the test
// case that found it records it, and every later one ends rapid at once
// (runtime.Goexit, as the shrink budget does), so nothing is minimised
// against a store that fails every operation with the same error.
type brokenStop struct {
	err     error    // the store's first error
	failure string   // the failure of the test case that found it
	steps   []string // that test case's steps, then its failure
}

// record notes a broken store once, after the test case t.
func (b *brokenStop) record(t *rapid.T, err error, steps []string) {
	if b == nil || err == nil || b.err != nil {
		return
	}
	b.err, b.failure = err, rapidrun.FailureMessage(t)
	if b.failure == "" {
		b.failure = err.Error()
	}
	b.steps = append(steps, b.failure)
}

// property is Property; with stop, it stops at a broken store.
func (c Contract[S, C]) property(ctx context.Context, h *Harness[S, C], stats *Stats, stop *brokenStop) func(*rapid.T) {
	if stats == nil {
		stats = &Stats{}
	}
	return func(t *rapid.T) {
		if stop != nil && stop.err != nil {
			runtime.Goexit() // ends rapid.Check; deferred cleanups still run
		}
		var cfg C
		if c.DrawConfig != nil {
			cfg = c.DrawConfig(t)
		}
		store, release, err := h.Get(ctx, cfg)
		if err != nil {
			defer func() { stop.record(t, h.brokenShared(), nil) }()
			t.Fatalf("harness: %v", err)
		}
		defer func() {
			if err := release(); err != nil {
				t.Errorf("harness: close store: %v", err)
			}
		}()
		if stop != nil {
			// Before release: a store opened for this case alone is closed
			// there.
			defer func() { stop.record(t, c.Stores.broken(store), stats.CaseSteps()) }()
		}
		stats.Cases.Add(1)
		stats.beginCase()
		t.Repeat(interruptible(ctx, c.Start(ctx, t, store, cfg, stats)))
	}
}

// interruptible makes every action of a test case first check ctx, so that
// an interrupt ends the case it comes in at the next step (and the cases
// after it at once, in Harness.Get): a case of many steps (--steps) ran on
// for minutes after Ctrl-C, the reference model's actions never looking
// at ctx.
func interruptible(ctx context.Context, actions map[string]func(*rapid.T)) map[string]func(*rapid.T) {
	for name, act := range actions {
		actions[name] = func(t *rapid.T) {
			if err := ctx.Err(); err != nil {
				t.Fatalf("interrupted: %v", err)
			}
			act(t)
		}
	}
	return actions
}
