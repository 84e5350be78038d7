package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/conformance/internal/rapidrun"
)

// CheckConfig sets how the property runs outside `go test`.
type CheckConfig struct {
	Seed       uint64        // rapid's base seed; 0 is not allowed (rapid would pick one at random)
	Checks     int           // test cases to run; 0 means 100
	Steps      int           // average actions per test case; 0 means 30
	ShrinkTime time.Duration // bound on minimisation; 0 means 30s
	// Stats, when set, receives the live counts (for a progress display).
	Stats *Stats
}

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
}

// Check runs the state-machine property against stores from open, outside
// `go test`. The same seed gives the same sequences. The error reports a
// harness failure (the property could not run), not a failed check.
func Check(ctx context.Context, open Opener, cfg CheckConfig) (Report, error) {
	h := NewHarness(open)
	defer h.Close()
	stats := cfg.Stats
	if stats == nil {
		stats = &Stats{}
	}
	out, err := rapidrun.Run(rapidrun.Config{Name: "conformance", Seed: cfg.Seed, Checks: cfg.Checks, Steps: cfg.Steps, ShrinkTime: cfg.ShrinkTime}, Property(ctx, h, stats))
	if err != nil {
		return Report{}, err
	}
	rep := Report{Passed: out.Passed, Cases: stats.Cases.Load(), Ops: stats.Ops.Load(), Digest: stats.Digest(),
		Failure: out.Failure, MinimalSteps: out.MinimalSteps, Output: out.Output}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("conformance check interrupted: %w", err)
	}
	return rep, nil
}

// StepCount is the number of operations in a minimal sequence.
func StepCount(steps []string) int { return rapidrun.StepCount(steps) }
