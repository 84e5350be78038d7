// Package runstore is storecheck's conformance suite for the run-store contract
// (model/runstore), usable as a library in the style of testing/fstest.TestFS:
// a backend author calls Run from their own `go test` and gets named subtests
// — example tests of every operation and edge (leases, fencing tokens,
// interrupts, idempotency, gap-free numbering), and a rapid state-machine
// test that drives random operation sequences, with a clock the test
// advances, against the backend and the reference model side by side. Both
// this package and the contract's are named runstore, so a test that imports
// the two names one of them:
//
//	import confrunstore "github.com/storecheck/storecheck/conformance/runstore"
//
//	func TestRunStoreConformance(t *testing.T) {
//		confrunstore.Run(t, func(ctx context.Context) (runstore.Store, error) {
//			return myrunstore.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
//		})
//	}
//
// The same property also runs outside `go test` (Check), which is what
// `storecheck run --scenario runs-conformance` does.
package runstore

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/conformance/internal/engine"
	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// Opener opens a fresh, empty run store.
type Opener func(ctx context.Context) (runmodel.Store, error)

// Run runs the whole run-store conformance suite against the stores open
// returns, as subtests of t: "Examples/<name>" for every example and
// "StateMachine" for the rapid property (tune it with -rapid.checks,
// -rapid.steps, -rapid.seed; a failure prints the minimal sequence).
func Run(t *testing.T, open Opener) {
	t.Helper()
	contract().Run(t, open.withConfig)
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
type Report = engine.Report

// Stats counts what the state-machine property did, across test cases:
// Cases started and Ops compared, and the Digest of the steps so far.
type Stats = engine.Stats

// Check runs the state-machine property against stores from open, outside
// `go test`. The same seed gives the same sequences. The error reports a
// harness failure (the property could not run), not a failed check.
func Check(ctx context.Context, open Opener, cfg CheckConfig) (Report, error) {
	return contract().Check(ctx, open.withConfig, cfg)
}

// StepCount is the number of operations in a minimal sequence.
func StepCount(steps []string) int { return engine.StepCount(steps) }

// Harness hands out stores to the suite. A store that can be reset in place
// (runmodel.Resetter) is opened once and reset before every use; any other
// store is opened anew each time.
type Harness struct {
	stores *engine.Harness[runmodel.Store, noConfig]
}

// NewHarness returns a harness over open.
func NewHarness(open Opener) *Harness {
	return &Harness{stores: engine.NewHarness(stores(), open.withConfig)}
}

// Get returns an empty store and the function that gives it back, which
// must be called before the next Get.
func (h *Harness) Get(ctx context.Context) (runmodel.Store, func() error, error) {
	return h.stores.Get(ctx, noConfig{})
}

// Close closes the shared store, if one was opened.
func (h *Harness) Close() error { return h.stores.Close() }

// Property returns the rapid state-machine property: every test case takes
// an empty store from h and an empty reference model, applies a random
// sequence of operations to both at a clock the sequence advances —
// deliberately stale versions, stale fencing tokens, expired leases and
// wrong sequences included — compares every result, and after every step
// compares all five tables and checks the contract's invariants. stats may
// be nil; ctx bounds the whole property.
func Property(ctx context.Context, h *Harness, stats *Stats) func(*rapid.T) {
	return contract().Property(ctx, h.stores, stats)
}

// noConfig is the configuration of a run store: there is none.
type noConfig = struct{}

// withConfig is open as the engine calls it.
func (open Opener) withConfig(ctx context.Context, _ noConfig) (runmodel.Store, error) {
	return open(ctx)
}

// contract is the run-store contract as the engine drives it.
func contract() engine.Contract[runmodel.Store, noConfig] {
	var exs []engine.Example[runmodel.Store, noConfig]
	for _, ex := range examples() {
		exs = append(exs, ex.checkingInvariants())
	}
	return engine.Contract[runmodel.Store, noConfig]{
		Name:     "runs-conformance",
		Suite:    "run-store conformance",
		Stores:   stores(),
		Examples: exs,
		Start:    start,
	}
}

// stores says how the harness hands out run stores: a runmodel.Resetter is
// reset.
func stores() engine.Stores[runmodel.Store, noConfig] {
	return engine.Stores[runmodel.Store, noConfig]{
		Noun:     "run store",
		CanReset: func(s runmodel.Store) bool { _, ok := s.(runmodel.Resetter); return ok },
		Reset: func(ctx context.Context, s runmodel.Store, _ noConfig) error {
			return s.(runmodel.Resetter).Reset(ctx)
		},
	}
}
