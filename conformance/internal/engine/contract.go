// Package engine drives a store contract's conformance suite: the go-test
// harness that names the subtests, the rapid state-machine property run
// outside `go test` (seed, checks, shrink bound, the Report), the sequence
// digest and step counting, and the harness that hands out stores. It knows
// nothing of any contract: each suite (conformance for the execution store,
// conformance/runstore for the run store) describes its own in a Contract —
// its operations, its comparison with its reference model, its examples —
// and the engine runs it.
package engine

import (
	"context"
	"io"
	"testing"

	"pgregory.net/rapid"
)

// Contract is one store contract as the engine drives it. S is the contract's
// store interface; C the configuration a store is opened with (struct{} for
// a contract without one).
type Contract[S io.Closer, C any] struct {
	// Name is what rapid calls the property outside `go test`, e.g.
	// "conformance".
	Name string
	// Suite is what an interrupted check's error calls the suite, e.g.
	// "run-store conformance".
	Suite string
	// Stores says how the harness hands out stores.
	Stores Stores[S, C]
	// Examples are the example tests, in the order Run runs them.
	Examples []Example[S, C]
	// DrawConfig draws the configuration of one test case's store; nil
	// gives every test case the zero C and draws nothing.
	DrawConfig func(t *rapid.T) C
	// Start begins one test case on an empty store configured with cfg: it
	// returns the actions rapid repeats (as t.Repeat takes them), which
	// count their operations and record their steps in stats.
	Start func(ctx context.Context, t *rapid.T, s S, cfg C, stats *Stats) map[string]func(*rapid.T)
}

// Example is one named example test and the configuration of its store.
type Example[S io.Closer, C any] struct {
	Name   string
	Config C
	Run    func(ctx context.Context, t *testing.T, s S)
}
