// Package conformance is storecheck's conformance suite for the execution-store
// contract, usable as a library in the style of testing/fstest.TestFS: a
// backend author calls Run from their own `go test` and gets named subtests —
// example tests of every operation and edge, and a rapid state-machine test
// that drives random operation sequences against the backend and the reference
// model side by side.
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
//			return mystore.Open(ctx, t.TempDir()+"/x.db", cfg)
//		})
//	}
//
// A failure prints the seed that replays it (-rapid.seed=N with the -run
// of the StateMachine subtest); -rapid.checks=N runs longer. A store that
// implements model.Dumper has its six tables compared from its dump, any
// other from what its reads return.
//
// The property is sequential and cannot see races: the concurrent,
// linearizability-checked workload is workload.Run, which a `go test` can
// call too.
//
// The same property also runs outside `go test` (Check), which is what
// `storecheck run --scenario conformance` does.
package conformance

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/conformance/internal/engine"
	"github.com/storecheck/storecheck/model"
)

// Opener opens a fresh, empty store with the given configuration.
type Opener func(ctx context.Context, cfg model.Config) (model.Store, error)

// Run runs the whole conformance suite against the stores open returns, as
// subtests of t: "Examples/<name>" for every example and "StateMachine" for
// the rapid property. Tune the property with the usual rapid flags
// (-rapid.checks, -rapid.steps, -rapid.seed); a failure prints the seed and
// the minimal sequence of steps.
func Run(t *testing.T, open Opener) {
	t.Helper()
	contract().Run(t, open)
}

// CheckConfig sets how the property runs outside `go test`: Seed (non-zero),
// Checks (test cases, 0 means 100), Steps (average actions per test case, 0
// means 30), ShrinkRuns (test cases re-run to minimise a failure, 0 means
// 500: the same seed shrinks alike on any machine), ShrinkTime (a
// wall-clock backstop, 0 means 5 minutes), and Stats,
// which when set receives the live counts.
type CheckConfig = engine.Config

// Report is the outcome of Check: whether it Passed, the test Cases started
// (shrinking re-runs included), the store Ops compared, the Digest of the
// sequence of steps (the same seed gives the same digest), rapid's Failure
// message and the MinimalSteps of the shrunk sequence (one "step: …" line
// per operation, ending with the failed comparison), and the whole Output.
// When the store broke for good (model.Breakable: an adapter that broke its
// protocol), Broken is its first error and the check stopped there: Failure
// and MinimalSteps are then the unshrunk test case that broke it.
type Report = engine.Report

// Stats counts what the state-machine property did, across test cases:
// Cases started and Ops compared, and the Digest of the steps so far.
type Stats = engine.Stats

// Check runs the state-machine property against stores from open, outside
// `go test`. The same seed gives the same sequences. The error reports a
// harness failure (the property could not run), not a failed check.
func Check(ctx context.Context, open Opener, cfg CheckConfig) (Report, error) {
	return contract().Check(ctx, open, cfg)
}

// StepCount is the number of operations in a minimal sequence.
func StepCount(steps []string) int { return engine.StepCount(steps) }

// Harness hands out stores to the suite. A store that can be reset in place
// and have its trace cap changed (model.Resetter and model.TraceMaxSetter) is
// opened once and reset before every use: opening many short-lived databases
// is slow, and has crashed libSQL. Any other store is opened anew each time.
// Get returns an empty store configured as asked and the function that gives
// it back, to be called before the next Get.
type Harness = engine.Harness[model.Store, model.Config]

// NewHarness returns a harness over open.
func NewHarness(open Opener) *Harness { return engine.NewHarness(stores(), open) }

// Property returns the rapid state-machine property: every test case takes an
// empty store from h and an empty reference model with the same trace cap,
// applies a random sequence of operations to both — including deliberately
// stale commits — compares every result, and compares all six tables after
// every step. stats may be nil.
//
// ctx bounds the whole property: once it is done, every test case fails at
// once, so an interrupted run ends quickly.
func Property(ctx context.Context, h *Harness, stats *Stats) func(*rapid.T) {
	return contract().Property(ctx, h, stats)
}

// contract is the execution-store contract as the engine drives it.
func contract() engine.Contract[model.Store, model.Config] {
	var exs []engine.Example[model.Store, model.Config]
	for _, ex := range examples() {
		exs = append(exs, ex.withConfig())
	}
	return engine.Contract[model.Store, model.Config]{
		Name:       "conformance",
		Suite:      "conformance",
		Stores:     stores(),
		Examples:   exs,
		DrawConfig: drawConfig,
		Start:      start,
	}
}

// reusable is a store the harness may reset and hand out again.
type reusable interface {
	model.Store
	model.Resetter
	model.TraceMaxSetter
}

// stores says how the harness hands out execution stores: a reusable one is
// reset and given the test's trace cap.
func stores() engine.Stores[model.Store, model.Config] {
	return engine.Stores[model.Store, model.Config]{
		Noun:     "store",
		CanReset: func(s model.Store) bool { _, ok := s.(reusable); return ok },
		Reset: func(ctx context.Context, s model.Store, cfg model.Config) error {
			r := s.(reusable)
			if err := r.Reset(ctx); err != nil {
				return err
			}
			r.SetTraceMax(cfg.TraceMax)
			return nil
		},
		Broken: func(s model.Store) error {
			if b, ok := s.(model.Breakable); ok {
				return b.Broken()
			}
			return nil
		},
	}
}
