package engine

import (
	"context"
	"testing"

	"pgregory.net/rapid"
)

// Run runs the whole suite against the stores open returns, as subtests of
// t: "Examples/<name>" for every example and "StateMachine" for the rapid
// property (tuned with the usual rapid flags: -rapid.checks, -rapid.steps,
// -rapid.seed; a failure prints the seed and the minimal sequence of steps).
func (c Contract[S, C]) Run(t *testing.T, open func(ctx context.Context, cfg C) (S, error)) {
	t.Helper()
	h := NewHarness(c.Stores, open)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close %s under test: %v", c.Stores.Noun, err)
		}
	})
	t.Run("Examples", func(t *testing.T) {
		for _, ex := range c.Examples {
			t.Run(ex.Name, func(t *testing.T) {
				ctx := context.Background()
				s, release, err := h.Get(ctx, ex.Config)
				if err != nil {
					t.Fatalf("harness: %v", err)
				}
				t.Cleanup(func() {
					if err := release(); err != nil {
						t.Errorf("close store: %v", err)
					}
				})
				ex.Run(ctx, t, s)
			})
		}
	})
	t.Run("StateMachine", func(t *testing.T) {
		rapid.Check(t, c.Property(context.Background(), h, nil))
	})
}
