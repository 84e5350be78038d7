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
// The same property also runs outside `go test` (Check), which is what
// `storecheck run --scenario conformance` does.
package conformance

import (
	"context"
	"fmt"
	"sync"

	"github.com/storecheck/storecheck/model"
)

// Opener opens a fresh, empty store with the given configuration.
type Opener func(ctx context.Context, cfg model.Config) (model.Store, error)

// Harness hands out stores to the suite. A store that can be reset in place
// and have its trace cap changed (model.Resetter and model.TraceMaxSetter) is
// opened once and reset before every use: opening many short-lived databases
// is slow, and has crashed libSQL. Any other store is opened anew each time.
type Harness struct {
	open Opener

	mu      sync.Mutex
	shared  model.Store // the reusable store, once opened
	noReuse bool
}

// NewHarness returns a harness over open.
func NewHarness(open Opener) *Harness { return &Harness{open: open} }

// reusable is a store the harness may reset and hand out again.
type reusable interface {
	model.Store
	model.Resetter
	model.TraceMaxSetter
}

// Get returns an empty store configured with cfg, and the function that gives
// it back. The release function must be called before the next Get.
func (h *Harness) Get(ctx context.Context, cfg model.Config) (model.Store, func() error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("harness stopped: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shared == nil && !h.noReuse {
		s, err := h.open(ctx, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("open store under test: %w", err)
		}
		if _, ok := s.(reusable); !ok {
			h.noReuse = true
			return s, s.Close, nil
		}
		h.shared = s
	}
	if h.shared != nil {
		r := h.shared.(reusable)
		if err := r.Reset(ctx); err != nil {
			return nil, nil, fmt.Errorf("reset store under test: %w", err)
		}
		r.SetTraceMax(cfg.TraceMax)
		return r, func() error { return nil }, nil
	}
	s, err := h.open(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open store under test: %w", err)
	}
	return s, s.Close, nil
}

// Close closes the shared store, if one was opened.
func (h *Harness) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shared == nil {
		return nil
	}
	err := h.shared.Close()
	h.shared = nil
	return err
}
