//go:build cgo

package libsql

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/storecheck/storecheck/model"
)

// go-libsql's calls cannot be cancelled: Sync, and every statement an
// embedded replica delegates to the primary, are cgo calls into libSQL
// that take no context. A primary that stops answering while keeping its
// sockets open (frozen, or wedged: see docs/KNOWN-ISSUES.md) would hold the
// caller for ever, and a run with it. A guard bounds each such call by its
// caller's context: when the context ends first, the guard drops the
// link's connections (the blocked request then fails inside libSQL), waits
// callGrace for the call to come back, and else abandons it — the caller
// gets an error and goes on; the call's goroutine is left to finish or to
// die with the process.
//
// callGrace is how long a call may run on after its deadline once its
// connections were dropped: a dropped connection fails a blocked request
// within milliseconds, so seconds mean the call is stuck elsewhere.
const callGrace = 3 * time.Second

// maxCall bounds a call whose caller set no deadline (the property suite's
// steps set none): far past any answer a working server gives here, so that
// only a wedged primary reaches it, and a run against one still ends, in a
// verdict, instead of waiting for ever.
const maxCall = 2 * time.Minute

// guard bounds one link's go-libsql calls.
type guard struct {
	name     string // "replica r0", "primary": for errors
	drop     func() // drops the link's connections; nil when it has none
	inflight sync.WaitGroup
	maxCall  time.Duration // 0 means maxCall
}

// errAbandoned is the error of a call guarded gave up waiting for: it may
// still be running in libSQL.
var errAbandoned = errors.New("abandoned (go-libsql's calls cannot be cancelled)")

// guarded runs fn, bounded by ctx as described above, or by the guard's
// maxCall when ctx has no deadline.
func guarded[T any](ctx context.Context, g *guard, what string, fn func() (T, error)) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		bound := cmp.Or(g.maxCall, maxCall)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, bound, fmt.Errorf("no answer in %v, the bound of a call whose caller set no deadline: %w", bound, context.DeadlineExceeded))
		defer cancel()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	g.inflight.Add(1)
	go func() {
		defer g.inflight.Done()
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	if g.drop != nil {
		g.drop()
	}
	grace := time.NewTimer(callGrace)
	defer grace.Stop()
	var zero T
	select {
	case r := <-done:
		return zero, fmt.Errorf("%s: %s outlived its deadline (%w); its connections to the primary were dropped (then: %v)",
			g.name, what, context.Cause(ctx), r.err)
	case <-grace.C:
		return zero, fmt.Errorf("%s: %s outlived its deadline (%w) and did not return %s after its connections were dropped: %w",
			g.name, what, context.Cause(ctx), callGrace, errAbandoned)
	}
}

// guardedErr is guarded for a call that returns only an error.
func guardedErr(ctx context.Context, g *guard, what string, fn func() error) error {
	_, err := guarded(ctx, g, what, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// wait waits for every call of the link to come back, at most callGrace,
// and reports whether they did: a store must not be closed under a call
// still running in libSQL.
func (g *guard) wait() bool {
	done := make(chan struct{})
	go func() { g.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(callGrace):
		return false
	}
}

// boundedStore is a model.Store whose every call is guarded. Its Close
// closes the store under it only once no call is running in it; else it
// leaves it open (to the process's exit) and says so.
type boundedStore struct {
	inner model.Store
	g     *guard
}

var (
	_ model.Store          = boundedStore{}
	_ model.Dumper         = boundedStore{}
	_ model.Resetter       = boundedStore{}
	_ model.TraceMaxSetter = boundedStore{}
)

func (b boundedStore) Commit(ctx context.Context, exe *model.Execution, batch model.Batch) error {
	// The call may outlive this one: it gets a copy, and only a call that
	// came back in time moves the caller's version.
	cp := exe.Clone()
	err := guardedErr(ctx, b.g, "commit", func() error { return b.inner.Commit(ctx, cp, batch) })
	if err == nil {
		exe.Version = cp.Version
	}
	return err
}

func (b boundedStore) Save(ctx context.Context, exe *model.Execution) error {
	return b.Commit(ctx, exe, model.Batch{})
}

func (b boundedStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	return guarded(ctx, b.g, "load", func() (*model.Execution, error) { return b.inner.Load(ctx, id) })
}

func (b boundedStore) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	type pair struct {
		exe       *model.Execution
		processed bool
	}
	p, err := guarded(ctx, b.g, "load for event", func() (pair, error) {
		e, ok, err := b.inner.LoadForEvent(ctx, id, eventID)
		return pair{e, ok}, err
	})
	return p.exe, p.processed, err
}

func (b boundedStore) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return guarded(ctx, b.g, "list executions", func() (model.Page, error) { return b.inner.ListExecutions(ctx, f) })
}

func (b boundedStore) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	return guarded(ctx, b.g, "is processed", func() (bool, error) { return b.inner.IsProcessed(ctx, id, eventID) })
}

func (b boundedStore) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return guarded(ctx, b.g, "pending outbox", func() ([]model.OutboxEntry, error) { return b.inner.PendingOutbox(ctx) })
}

func (b boundedStore) AckOutbox(ctx context.Context, seq int64) error {
	return guardedErr(ctx, b.g, "ack outbox", func() error { return b.inner.AckOutbox(ctx, seq) })
}

func (b boundedStore) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return guarded(ctx, b.g, "pending spawns", func() ([]model.SpawnEntry, error) { return b.inner.PendingSpawns(ctx) })
}

func (b boundedStore) AckSpawn(ctx context.Context, seq int64) error {
	return guardedErr(ctx, b.g, "ack spawn", func() error { return b.inner.AckSpawn(ctx, seq) })
}

func (b boundedStore) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	return guarded(ctx, b.g, "due timers", func() ([]model.DueTimer, error) { return b.inner.DueTimers(ctx, now) })
}

func (b boundedStore) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	return guardedErr(ctx, b.g, "delete timer", func() error { return b.inner.DeleteTimer(ctx, id, path, fireAt) })
}

func (b boundedStore) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	return guardedErr(ctx, b.g, "append trace", func() error { return b.inner.AppendTrace(ctx, id, entry) })
}

func (b boundedStore) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return guarded(ctx, b.g, "read trace", func() ([]model.TraceEntry, error) { return b.inner.ReadTrace(ctx, id) })
}

func (b boundedStore) Dump(ctx context.Context) (*model.Dump, error) {
	d, ok := b.inner.(model.Dumper)
	if !ok {
		return nil, fmt.Errorf("%s: dump: %T cannot dump its tables", b.g.name, b.inner)
	}
	return guarded(ctx, b.g, "dump", func() (*model.Dump, error) { return d.Dump(ctx) })
}

func (b boundedStore) Reset(ctx context.Context) error {
	r, ok := b.inner.(model.Resetter)
	if !ok {
		return fmt.Errorf("%s: reset: %T cannot be emptied", b.g.name, b.inner)
	}
	return guardedErr(ctx, b.g, "reset", func() error { return r.Reset(ctx) })
}

func (b boundedStore) SetTraceMax(n int) {
	if t, ok := b.inner.(model.TraceMaxSetter); ok {
		t.SetTraceMax(n)
	}
}

// Close closes the store under it once no call runs in it.
func (b boundedStore) Close() error {
	if !b.g.wait() {
		return fmt.Errorf("%s: left open: a go-libsql call abandoned after its deadline had not come back %s later (it ends with the process)", b.g.name, callGrace)
	}
	return b.inner.Close()
}
