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
	"fmt"
	"sync"

	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// Opener opens a fresh, empty run store.
type Opener func(ctx context.Context) (runmodel.Store, error)

// Harness hands out stores to the suite. A store that can be reset in place
// (runmodel.Resetter) is opened once and reset before every use; any other
// store is opened anew each time.
type Harness struct {
	open Opener

	mu      sync.Mutex
	shared  runmodel.Store
	noReuse bool
}

// NewHarness returns a harness over open.
func NewHarness(open Opener) *Harness { return &Harness{open: open} }

// Get returns an empty store and the function that gives it back, which
// must be called before the next Get.
func (h *Harness) Get(ctx context.Context) (runmodel.Store, func() error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("harness stopped: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shared == nil && !h.noReuse {
		s, err := h.open(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("open run store under test: %w", err)
		}
		if _, ok := s.(runmodel.Resetter); !ok {
			h.noReuse = true
			return s, s.Close, nil
		}
		h.shared = s
	}
	if h.shared != nil {
		if err := h.shared.(runmodel.Resetter).Reset(ctx); err != nil {
			return nil, nil, fmt.Errorf("reset run store under test: %w", err)
		}
		return h.shared, func() error { return nil }, nil
	}
	s, err := h.open(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open run store under test: %w", err)
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
