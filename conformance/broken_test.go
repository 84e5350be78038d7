package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// breaksAt is a store that breaks for good at its n-th pending_outbox, as
// an adapter that crashes does: that call and every later one fail with an
// error wrapping model.ErrBroken, and Broken says so. It can be reset, as
// the adapter stores that conformance shares across test cases can.
type breaksAt struct {
	*model.Reference
	mu     sync.Mutex
	n      int
	broken error
}

func (b *breaksAt) Broken() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

// fail breaks the store on its n-th call, and fails every call from then.
func (b *breaksAt) fail() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken == nil {
		if b.n--; b.n > 0 {
			return nil
		}
		b.broken = fmt.Errorf("adapter \"fake\": pending_outbox: it exited: exit status 11: %w", model.ErrBroken)
		return b.broken
	}
	return fmt.Errorf("adapter \"fake\" is unusable after an earlier failure: %w", b.broken)
}

func (b *breaksAt) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	if err := b.fail(); err != nil {
		return nil, err
	}
	return b.Reference.PendingOutbox(ctx)
}

func (b *breaksAt) Reset(ctx context.Context) error {
	if err := b.Broken(); err != nil {
		return fmt.Errorf("adapter \"fake\" is unusable after an earlier failure: %w", err)
	}
	cfg := model.DefaultConfig()
	b.Reference = model.NewReference(cfg)
	return nil
}

func (b *breaksAt) SetTraceMax(n int) { b.Reference.SetTraceMax(n) }

// TestCheckStopsAtABrokenStore: a store that breaks for good
// (model.Breakable) ends the check at the test case that broke it, with
// its first error and that case's steps: no minimisation against a store
// that fails every later call (which rapid gave up on as "flaky test, can
// not reproduce a failure", the real cause buried in a failed reset).
func TestCheckStopsAtABrokenStore(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			opens := 0
			open := func(_ context.Context, cfg model.Config) (model.Store, error) {
				opens++
				s := &breaksAt{Reference: model.NewReference(cfg), n: 3}
				if shared {
					return s, nil
				}
				return struct{ breakable }{s}, nil // no Reset: a store per test case
			}
			rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: 1, Checks: 20})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed {
				t.Fatal("a broken store passed")
			}
			if !errors.Is(rep.Broken, model.ErrBroken) || !strings.Contains(rep.Broken.Error(), "exit status 11") {
				t.Errorf("Broken = %v, want the store's first error", rep.Broken)
			}
			if strings.Contains(rep.Failure, "flaky") || !strings.Contains(rep.Failure, "exit status 11") || strings.Contains(rep.Failure, "unusable") {
				t.Errorf("failure %q does not give the store's first error", rep.Failure)
			}
			steps := rep.MinimalSteps
			if conformance.StepCount(steps) == 0 || !strings.Contains(steps[len(steps)-1], "pending_outbox") {
				t.Errorf("steps do not lead to the break:\n%s", strings.Join(steps, "\n"))
			}
			if rep.Cases > 3 || opens > 3 {
				t.Errorf("%d test cases ran and %d stores were opened after a store that broke in its first", rep.Cases, opens)
			}
		})
	}
}

// breakable is the store without its Reset, for a harness that opens a
// store per test case.
type breakable interface {
	model.Store
	model.Breakable
}
