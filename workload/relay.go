package workload

import (
	"context"

	"github.com/storecheck/storecheck/model"
)

// The relay and the sweeper are the engine's background loops: they read a
// queue and remove a few entries, as a dispatcher would after delivering
// them. Each step is bounded: at most maxAcks or maxDeletes removals.

// relay reads the outbox and acknowledges up to maxAcks entries, mostly the
// oldest.
func (w *worker) relay(ctx context.Context, _ string) error {
	octx, cancel := w.op(ctx)
	entries, err := w.c.PendingOutbox(octx)
	cancel()
	if err != nil {
		return err
	}
	seqs := make([]int64, len(entries))
	for i, e := range entries {
		seqs[i] = e.Seq
	}
	return w.ack(ctx, seqs, func(ctx context.Context, seq int64) error { return w.c.AckOutbox(ctx, seq) })
}

// spawnRelay reads the spawn queue and acknowledges up to maxAcks intents.
func (w *worker) spawnRelay(ctx context.Context, _ string) error {
	octx, cancel := w.op(ctx)
	entries, err := w.c.PendingSpawns(octx)
	cancel()
	if err != nil {
		return err
	}
	seqs := make([]int64, len(entries))
	for i, e := range entries {
		seqs[i] = e.Seq
	}
	return w.ack(ctx, seqs, func(ctx context.Context, seq int64) error { return w.c.AckSpawn(ctx, seq) })
}

// ack removes up to maxAcks of seqs: the oldest, or a random one.
func (w *worker) ack(ctx context.Context, seqs []int64, ack func(context.Context, int64) error) error {
	for range min(len(seqs), 1+w.rng.IntN(maxAcks)) {
		i := 0
		if w.rng.IntN(3) == 0 {
			i = w.rng.IntN(len(seqs))
		}
		seq := seqs[i]
		seqs = append(seqs[:i], seqs[i+1:]...)
		octx, cancel := w.writeOp(ctx)
		err := ack(octx, seq)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// sweep reads the timers due at a random time and deletes up to maxDeletes
// of them; sometimes it deletes one the previous sweep saw instead, which
// may have been re-armed since (a stale sweep, which must delete nothing).
func (w *worker) sweep(ctx context.Context, _ string) error {
	now := w.rng.Float64() * maxFireAt(w.cfg.FirstClient+w.cfg.Clients)
	octx, cancel := w.op(ctx)
	due, err := w.c.DueTimers(octx, now)
	cancel()
	if err != nil {
		return err
	}
	stale := w.due
	w.due = due
	for range min(len(due)+len(stale), 1+w.rng.IntN(maxDeletes)) {
		var t model.DueTimer
		if len(stale) > 0 && (len(due) == 0 || w.rng.IntN(3) == 0) {
			t = stale[w.rng.IntN(len(stale))]
		} else {
			t = due[w.rng.IntN(len(due))]
		}
		octx, cancel := w.writeOp(ctx)
		err := w.c.DeleteTimer(octx, t.ExecutionID, t.Path, t.FireAt)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}
