package engine

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Stores says what a contract calls its stores and how one is handed out
// again.
type Stores[S io.Closer, C any] struct {
	// Noun is what messages call a store under test: "store", "run store".
	Noun string
	// CanReset tells whether s can be emptied in place.
	CanReset func(s S) bool
	// Reset empties s (one CanReset accepted) and configures it with cfg.
	Reset func(ctx context.Context, s S, cfg C) error
	// Broken, when set, returns the error that broke s for good (an
	// adapter that broke its protocol), nil while s is usable: Check then
	// stops at once rather than minimise against a store that can no longer
	// answer.
	Broken func(s S) error
}

// broken is Stores.Broken of s, nil without one.
func (st Stores[S, C]) broken(s S) error {
	if st.Broken == nil {
		return nil
	}
	return st.Broken(s)
}

// Harness hands out stores to a suite. A store that can be reset in place is
// opened once and reset before every use: opening many short-lived
// databases is slow, and has crashed libSQL. Any other store is opened anew
// each time.
type Harness[S io.Closer, C any] struct {
	stores Stores[S, C]
	open   func(ctx context.Context, cfg C) (S, error)

	mu        sync.Mutex
	shared    S    // the reusable store, once opened
	hasShared bool // shared holds an open store
	noReuse   bool
}

// NewHarness returns a harness over open.
func NewHarness[S io.Closer, C any](stores Stores[S, C], open func(ctx context.Context, cfg C) (S, error)) *Harness[S, C] {
	return &Harness[S, C]{stores: stores, open: open}
}

// Get returns an empty store configured with cfg, and the function that
// gives it back. The release function must be called before the next Get.
func (h *Harness[S, C]) Get(ctx context.Context, cfg C) (S, func() error, error) {
	var none S
	if err := ctx.Err(); err != nil {
		return none, nil, fmt.Errorf("harness stopped: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.hasShared && !h.noReuse {
		s, err := h.open(ctx, cfg)
		if err != nil {
			return none, nil, fmt.Errorf("open %s under test: %w", h.stores.Noun, err)
		}
		if !h.stores.CanReset(s) {
			h.noReuse = true
			return s, s.Close, nil
		}
		h.shared, h.hasShared = s, true
	}
	if h.hasShared {
		if err := h.stores.Reset(ctx, h.shared, cfg); err != nil {
			return none, nil, fmt.Errorf("reset %s under test: %w", h.stores.Noun, err)
		}
		return h.shared, func() error { return nil }, nil
	}
	s, err := h.open(ctx, cfg)
	if err != nil {
		return none, nil, fmt.Errorf("open %s under test: %w", h.stores.Noun, err)
	}
	return s, s.Close, nil
}

// Close closes the shared store, if one was opened.
func (h *Harness[S, C]) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.hasShared {
		return nil
	}
	err := h.shared.Close()
	var none S
	h.shared, h.hasShared = none, false
	return err
}

// brokenShared is Stores.Broken of the shared store, if one is open.
func (h *Harness[S, C]) brokenShared() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.hasShared {
		return nil
	}
	return h.stores.broken(h.shared)
}
