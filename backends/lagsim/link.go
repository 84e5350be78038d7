package lagsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/internal/wait"
	"github.com/storecheck/storecheck/model"
)

// errUnreachable is the simulated network: a write refused before it
// reached the primary, so it provably did nothing.
var errUnreachable = errors.New("primary unreachable")

// link is one client's way to the primary. Its writes are refused, as not
// applied, while the gate is closed; in flight when it closes, they finish.
type link struct {
	inner   *sqlstore.Store
	gate    func() error
	write   func(func() error) error // runs and counts a write that reaches the primary (Cluster.write)
	latency time.Duration            // simulated time on the wire, there and back
}

// send runs one write through the gate, and counts it. With a simulated
// latency the write waits half of it before the gate and the primary, and
// half after.
func (l *link) send(ctx context.Context, what string, fn func() error) error {
	if err := wire(ctx, l.latency/2); err != nil {
		return l.refused(what, err)
	}
	if err := l.gate(); err != nil {
		return l.refused(what, err)
	}
	err := l.write(fn)
	if werr := wire(ctx, l.latency-l.latency/2); werr != nil && err == nil {
		// Applied, but the answer was not waited for: outcome unknown.
		return fmt.Errorf("%s: %s: the answer did not come back: %w", Scheme, what, werr)
	}
	return err
}

// wire is the simulated network's time: a wait of d, or ctx's end.
func wire(ctx context.Context, d time.Duration) error {
	if d <= 0 || wait.Sleep(ctx, d) {
		return nil
	}
	return ctx.Err()
}

// refused is the error of a write the gate stopped.
func (l *link) refused(what string, err error) error {
	return fmt.Errorf("%s: %s: %w: %w", Scheme, what, model.ErrNotApplied, err)
}

// The writes: refused while the gate is closed.

func (l *link) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	return l.send(ctx, fmt.Sprintf("commit %q", exe.ID), func() error { return l.inner.Commit(ctx, exe, b) })
}

func (l *link) Save(ctx context.Context, exe *model.Execution) error {
	return l.Commit(ctx, exe, model.Batch{})
}

func (l *link) AckOutbox(ctx context.Context, seq int64) error {
	return l.send(ctx, fmt.Sprintf("ack_outbox %d", seq), func() error { return l.inner.AckOutbox(ctx, seq) })
}

func (l *link) AckSpawn(ctx context.Context, seq int64) error {
	return l.send(ctx, fmt.Sprintf("ack_spawn %d", seq), func() error { return l.inner.AckSpawn(ctx, seq) })
}

func (l *link) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	return l.send(ctx, fmt.Sprintf("delete_timer %q %q", id, path), func() error { return l.inner.DeleteTimer(ctx, id, path, fireAt) })
}

func (l *link) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	return l.send(ctx, fmt.Sprintf("append_trace %q", id), func() error { return l.inner.AppendTrace(ctx, id, entry) })
}

// The reads below are never routed through the link by replica.Store (its
// reads go to the replica); they are here so that link is a model.Store,
// and they honour the gate too.

func (l *link) Load(ctx context.Context, id string) (*model.Execution, error) {
	if err := l.gate(); err != nil {
		return nil, err
	}
	return l.inner.Load(ctx, id)
}

func (l *link) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	if err := l.gate(); err != nil {
		return nil, false, err
	}
	return l.inner.LoadForEvent(ctx, id, eventID)
}

func (l *link) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	if err := l.gate(); err != nil {
		return model.Page{}, err
	}
	return l.inner.ListExecutions(ctx, f)
}

func (l *link) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	if err := l.gate(); err != nil {
		return false, err
	}
	return l.inner.IsProcessed(ctx, id, eventID)
}

func (l *link) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	if err := l.gate(); err != nil {
		return nil, err
	}
	return l.inner.PendingOutbox(ctx)
}

func (l *link) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	if err := l.gate(); err != nil {
		return nil, err
	}
	return l.inner.PendingSpawns(ctx)
}

func (l *link) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	if err := l.gate(); err != nil {
		return nil, err
	}
	return l.inner.DueTimers(ctx, now)
}

func (l *link) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	if err := l.gate(); err != nil {
		return nil, err
	}
	return l.inner.ReadTrace(ctx, id)
}

// Dump, Reset and SetTraceMax are the harness's, not the client's: they
// bypass the gate.
func (l *link) Dump(ctx context.Context) (*model.Dump, error) { return l.inner.Dump(ctx) }
func (l *link) Reset(ctx context.Context) error {
	return l.write(func() error { return l.inner.Reset(ctx) })
}
func (l *link) SetTraceMax(n int) { l.inner.SetTraceMax(n) }

// Close does nothing: the cluster owns the primary.
func (l *link) Close() error { return nil }

// primaryHandle is the primary handed out by Cluster.Primary: its writes
// are counted like a link's, and Close is the cluster's.
type primaryHandle struct {
	*sqlstore.Store
	c *Cluster
}

// The writes, counted.

func (p primaryHandle) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	return p.c.write(func() error { return p.Store.Commit(ctx, exe, b) })
}

func (p primaryHandle) Save(ctx context.Context, exe *model.Execution) error {
	return p.Commit(ctx, exe, model.Batch{})
}

func (p primaryHandle) AckOutbox(ctx context.Context, seq int64) error {
	return p.c.write(func() error { return p.Store.AckOutbox(ctx, seq) })
}

func (p primaryHandle) AckSpawn(ctx context.Context, seq int64) error {
	return p.c.write(func() error { return p.Store.AckSpawn(ctx, seq) })
}

func (p primaryHandle) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	return p.c.write(func() error { return p.Store.DeleteTimer(ctx, id, path, fireAt) })
}

func (p primaryHandle) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	return p.c.write(func() error { return p.Store.AppendTrace(ctx, id, entry) })
}

func (p primaryHandle) Reset(ctx context.Context) error {
	return p.c.write(func() error { return p.Store.Reset(ctx) })
}

// Close does nothing: the cluster closes the primary.
func (primaryHandle) Close() error { return nil }
