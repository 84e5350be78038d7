package conformance

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/model"
)

// Run runs the whole conformance suite against the stores open returns, as
// subtests of t: "Examples/<name>" for every example and "StateMachine" for
// the rapid property. Tune the property with the usual rapid flags
// (-rapid.checks, -rapid.steps, -rapid.seed); a failure prints the seed and
// the minimal sequence of steps.
func Run(t *testing.T, open Opener) {
	t.Helper()
	h := NewHarness(open)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close store under test: %v", err)
		}
	})
	t.Run("Examples", func(t *testing.T) {
		for _, ex := range examples() {
			t.Run(ex.name, func(t *testing.T) {
				cfg := model.DefaultConfig()
				if ex.traceMax != nil {
					cfg.TraceMax = *ex.traceMax
				}
				ctx := context.Background()
				s, release, err := h.Get(ctx, cfg)
				if err != nil {
					t.Fatalf("harness: %v", err)
				}
				t.Cleanup(func() {
					if err := release(); err != nil {
						t.Errorf("close store: %v", err)
					}
				})
				ex.run(ctx, t, s)
			})
		}
	})
	t.Run("StateMachine", func(t *testing.T) {
		rapid.Check(t, Property(context.Background(), h, nil))
	})
}
