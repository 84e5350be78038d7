package leasestall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// holding is what a worker knows of the claim it holds.
type holding struct {
	run      string
	fence    runstore.Fence
	version  int64     // the run's version after the worker's last write
	seq      int64     // the run's last checkpoint sequence
	priority int64     // the run's priority when claimed
	expires  time.Time // the expiry the worker was last granted
}

// worker claims runs and works on them: a few checkpoint steps, each after
// a renewal but the first, then a finish. It is the same code in goroutine
// and process mode; the hooks differ.
type worker struct {
	id    string
	c     *leases.Client
	store runstore.Store // for unrecorded reads
	lease time.Duration
	now   func() time.Time
	rng   *rand.Rand
	// claimGate, when set, is read-locked around every claim, so that the
	// fault can hold claims off while it hands a run over.
	claimGate *sync.RWMutex
	// before, when set, runs before each operation on a claim, numbered
	// from 1; it may block (the fault's pause). An error drops the claim.
	before func(ctx context.Context, n int, h holding) error
	// pace runs after every operation: advance the logical clock, or sleep.
	pace func()
	ops  int
}

// loop claims and works until stopped says so, ctx is done or the worker
// made maxOps operations. Stopping is a flag, not a cancelled context, so
// that no operation is cut off in flight (its outcome would be unknown).
func (w *worker) loop(ctx context.Context, stopped func() bool, maxOps int, idle func()) {
	for !stopped() && ctx.Err() == nil && w.ops < maxOps {
		h, ok := w.claim(ctx)
		if !ok {
			idle()
			continue
		}
		w.work(ctx, h, 1+w.rng.IntN(3))
	}
}

func (w *worker) after() {
	w.ops++
	if w.pace != nil {
		w.pace()
	}
}

// claim takes the next queued run, if any.
func (w *worker) claim(ctx context.Context) (holding, bool) {
	if w.claimGate != nil {
		w.claimGate.RLock()
		defer w.claimGate.RUnlock()
	}
	cl, err := w.c.Claim(ctx, w.id, w.lease, w.now())
	w.after()
	if err != nil || cl == nil {
		return holding{}, false
	}
	h := holding{run: cl.Run.ID, fence: runstore.Fence{Worker: w.id, Token: cl.Lease.Token}, version: cl.Run.Version,
		priority: cl.Run.Priority, expires: cl.Lease.ExpiresAt}
	// The checkpoint sequence is read, not recorded: the lease history does
	// not need it, and a wrong guess only makes the commit conflict.
	if cp, err := w.store.LatestCheckpoint(ctx, h.run); err == nil && cp != nil {
		h.seq = cp.Sequence
	}
	return h, true
}

// work makes steps checkpoint steps on h, then finishes the run (completed,
// or back to queued as a yielding worker does). It stops at the first
// operation that fails. Before each operation it reads its clock; at or past
// the expiry it was granted, it behaves as a worker that does not know it
// stalled (zombie) and drops the claim.
func (w *worker) work(ctx context.Context, h holding, steps int) {
	n := 0
	next := func() (time.Time, bool) {
		n++
		if w.before != nil {
			if err := w.before(ctx, n, h); err != nil {
				return time.Time{}, false
			}
		}
		now := w.now()
		if !now.Before(h.expires) {
			w.zombie(ctx, h, now)
			return now, false
		}
		return now, ctx.Err() == nil
	}
	for i := range steps {
		now, ok := next()
		if !ok {
			return
		}
		if i > 0 {
			l, err := w.c.Renew(ctx, h.run, h.fence, w.lease, now)
			w.after()
			if err != nil {
				return
			}
			h.expires = l.ExpiresAt
			if now, ok = next(); !ok {
				return
			}
		}
		run, err := w.c.Commit(ctx, w.checkpoint(h, now), h.fence, h.version)
		w.after()
		if err != nil {
			return
		}
		h.version, h.seq = run.Version, h.seq+1
	}
	now, ok := next()
	if !ok {
		return
	}
	target := runstore.Completed
	if w.rng.IntN(10) < 3 {
		target = runstore.Queued
	}
	_, _ = w.c.Finish(ctx, runstore.Finish{RunID: h.run, Fence: h.fence, ExpectedVersion: h.version, Target: target, Now: now})
	w.after()
}

// zombie is what a worker that does not know its lease expired does: it
// commits a checkpoint, finishes the run and renews, with its old fence.
// Before each write it reads the run back (unrecorded), as a worker
// reconciling its state would, so that its version and sequence are
// current and only the fence stands in its way. Every one of these writes
// must be rejected; they are recorded as PastLease, so the checker holds
// the store to that.
func (w *worker) zombie(ctx context.Context, h holding, now time.Time) {
	w.c.PastLease = true
	defer func() { w.c.PastLease = false }()
	w.refresh(ctx, &h)
	_, _ = w.c.Commit(ctx, w.checkpoint(h, now), h.fence, h.version)
	w.after()
	w.refresh(ctx, &h)
	_, _ = w.c.Finish(ctx, runstore.Finish{RunID: h.run, Fence: h.fence, ExpectedVersion: h.version, Target: runstore.Completed, Now: now})
	w.after()
	_, _ = w.c.Renew(ctx, h.run, h.fence, w.lease, now)
	w.after()
}

// refresh reads h's run version and last checkpoint sequence back.
func (w *worker) refresh(ctx context.Context, h *holding) {
	if run, err := w.store.GetRun(ctx, h.run); err == nil {
		h.version = run.Version
	}
	if cp, err := w.store.LatestCheckpoint(ctx, h.run); err == nil && cp != nil {
		h.seq = cp.Sequence
	}
}

// checkpoint is h's next checkpoint at now; its id names the run, sequence
// and fence, so that no two attempts share one.
func (w *worker) checkpoint(h holding, now time.Time) runstore.Checkpoint {
	seq := h.seq + 1
	return runstore.Checkpoint{
		ID:    fmt.Sprintf("%s/%d/%s/%d", h.run, seq, h.fence.Worker, h.fence.Token),
		RunID: h.run, Sequence: seq, PlanHash: "lease-stall",
		State: []byte(fmt.Sprintf(`{"seq":%d}`, seq)), NextNodes: []string{fmt.Sprintf("n%d", seq+1)},
		EffectWatermark: seq, CreatedAt: now,
	}
}
