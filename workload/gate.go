package workload

import (
	"context"
	"sync"
)

// Gate holds the clients' next steps while it is closed: a fault that needs
// the store quiet for a moment (no new writes, so that a server takes no
// snapshot and compacts nothing) closes it and opens it again. A step in
// flight when it closes runs to its end; the clients wait before their
// next. The zero Gate is open.
type Gate struct {
	mu     sync.Mutex
	closed chan struct{} // nil while open; closed (the channel) when opened again
}

// Close holds the clients' next steps until Open.
func (g *Gate) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed == nil {
		g.closed = make(chan struct{})
	}
}

// Open lets the clients go on. Opening an open gate does nothing.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed != nil {
		close(g.closed)
		g.closed = nil
	}
}

// Wait returns at once while the gate is open; while it is closed, when it
// opens or ctx ends.
func (g *Gate) Wait(ctx context.Context) {
	g.mu.Lock()
	ch := g.closed
	g.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
