package runstore

import (
	"context"
	"testing"

	"pgregory.net/rapid"
)

// Run runs the whole run-store conformance suite against the stores open
// returns, as subtests of t: "Examples/<name>" for every example and
// "StateMachine" for the rapid property (tune it with -rapid.checks,
// -rapid.steps, -rapid.seed; a failure prints the minimal sequence).
func Run(t *testing.T, open Opener) {
	t.Helper()
	h := NewHarness(open)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close run store under test: %v", err)
		}
	})
	t.Run("Examples", func(t *testing.T) {
		for _, ex := range examples() {
			t.Run(ex.name, func(t *testing.T) {
				ctx := context.Background()
				s, release, err := h.Get(ctx)
				if err != nil {
					t.Fatalf("harness: %v", err)
				}
				t.Cleanup(func() {
					if err := release(); err != nil {
						t.Errorf("close store: %v", err)
					}
				})
				ex.run(ctx, t, s)
				checkInvariants(ctx, t, s)
			})
		}
	})
	t.Run("StateMachine", func(t *testing.T) {
		rapid.Check(t, Property(context.Background(), h, nil))
	})
}
