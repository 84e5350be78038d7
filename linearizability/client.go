package linearizability

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// The Client methods mirror model.Store. Each records one operation and
// returns what the store returned; a refused overlapping call returns
// ErrOverlap without calling the store.

// Commit records store.Commit. The execution's witness fields and the
// batch's ids are recorded as the inputs.
func (c *Client) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	return c.commit(ctx, KindCommit, exe, b)
}

// Save records store.Save.
func (c *Client) Save(ctx context.Context, exe *model.Execution) error {
	return c.commit(ctx, KindSave, exe, model.Batch{})
}

func (c *Client) commit(ctx context.Context, kind Kind, exe *model.Execution, b model.Batch) error {
	in, err := commitInput(exe, b)
	if err != nil {
		return fmt.Errorf("%w: %s of %q: %w", ErrNotRecorded, kind, exe.ID, err)
	}
	call, err := c.begin(kind)
	if err != nil {
		return err
	}
	if kind == KindSave {
		err = c.store.Save(ctx, exe)
	} else {
		err = c.store.Commit(ctx, exe, b)
	}
	c.finish(Operation{Kind: kind, Execution: exe.ID, Input: in, Output: classify(kind, err), Call: call})
	return err
}

// Load records store.Load.
func (c *Client) Load(ctx context.Context, id string) (*model.Execution, error) {
	call, err := c.begin(KindLoad)
	if err != nil {
		return nil, err
	}
	exe, err := c.store.Load(ctx, id)
	out := classify(KindLoad, err)
	if err == nil {
		out, err = readOutput(loadOutput(exe, false))
	}
	c.finish(Operation{Kind: KindLoad, Execution: id, Output: out, Call: call})
	return exe, err
}

// LoadForEvent records store.LoadForEvent.
func (c *Client) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	call, err := c.begin(KindLoadForEvent)
	if err != nil {
		return nil, false, err
	}
	exe, done, err := c.store.LoadForEvent(ctx, id, eventID)
	out := classify(KindLoadForEvent, err)
	if err == nil {
		out, err = readOutput(loadOutput(exe, done))
	}
	c.finish(Operation{Kind: KindLoadForEvent, Execution: id, Input: Input{EventID: eventID}, Output: out, Call: call})
	return exe, done, err
}

// IsProcessed records store.IsProcessed.
func (c *Client) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	call, err := c.begin(KindIsProcessed)
	if err != nil {
		return false, err
	}
	done, err := c.store.IsProcessed(ctx, id, eventID)
	out := classify(KindIsProcessed, err)
	out.Processed = err == nil && done
	c.finish(Operation{Kind: KindIsProcessed, Execution: id, Input: Input{EventID: eventID}, Output: out, Call: call})
	return done, err
}

// ReadTrace records store.ReadTrace.
func (c *Client) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	call, err := c.begin(KindReadTrace)
	if err != nil {
		return nil, err
	}
	entries, err := c.store.ReadTrace(ctx, id)
	out := classify(KindReadTrace, err)
	if err == nil {
		var items []TraceItem
		if items, err = traceItems(entries); err == nil {
			out.Trace = items
		} else {
			out = classify(KindReadTrace, err)
		}
	}
	c.finish(Operation{Kind: KindReadTrace, Execution: id, Output: out, Call: call})
	return entries, err
}

// AppendTrace records store.AppendTrace.
func (c *Client) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	ref, err := ObjectID(entry)
	if err != nil {
		return fmt.Errorf("%w: append_trace of %q: %w", ErrNotRecorded, id, err)
	}
	call, err := c.begin(KindAppendTrace)
	if err != nil {
		return err
	}
	err = c.store.AppendTrace(ctx, id, entry)
	c.finish(Operation{Kind: KindAppendTrace, Execution: id, Input: Input{Trace: ref}, Output: classify(KindAppendTrace, err), Call: call})
	return err
}

// PendingOutbox records store.PendingOutbox.
func (c *Client) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	call, err := c.begin(KindPendingOutbox)
	if err != nil {
		return nil, err
	}
	entries, err := c.store.PendingOutbox(ctx)
	out := classify(KindPendingOutbox, err)
	if err == nil {
		out.Outbox = outboxItems(entries)
	}
	c.finish(Operation{Kind: KindPendingOutbox, Output: out, Call: call})
	return entries, err
}

// AckOutbox records store.AckOutbox.
func (c *Client) AckOutbox(ctx context.Context, seq int64) error {
	call, err := c.begin(KindAckOutbox)
	if err != nil {
		return err
	}
	err = c.store.AckOutbox(ctx, seq)
	c.finish(Operation{Kind: KindAckOutbox, Input: Input{Seq: seq}, Output: classify(KindAckOutbox, err), Call: call})
	return err
}

// PendingSpawns records store.PendingSpawns.
func (c *Client) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	call, err := c.begin(KindPendingSpawns)
	if err != nil {
		return nil, err
	}
	entries, err := c.store.PendingSpawns(ctx)
	out := classify(KindPendingSpawns, err)
	if err == nil {
		out.Spawns = spawnItems(entries)
	}
	c.finish(Operation{Kind: KindPendingSpawns, Output: out, Call: call})
	return entries, err
}

// AckSpawn records store.AckSpawn.
func (c *Client) AckSpawn(ctx context.Context, seq int64) error {
	call, err := c.begin(KindAckSpawn)
	if err != nil {
		return err
	}
	err = c.store.AckSpawn(ctx, seq)
	c.finish(Operation{Kind: KindAckSpawn, Input: Input{Seq: seq}, Output: classify(KindAckSpawn, err), Call: call})
	return err
}

// DueTimers records store.DueTimers.
func (c *Client) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	call, err := c.begin(KindDueTimers)
	if err != nil {
		return nil, err
	}
	timers, err := c.store.DueTimers(ctx, now)
	out := classify(KindDueTimers, err)
	if err == nil {
		out.Timers = timerItems(timers)
	}
	c.finish(Operation{Kind: KindDueTimers, Input: Input{Now: now}, Output: out, Call: call})
	return timers, err
}

// DeleteTimer records store.DeleteTimer.
func (c *Client) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	call, err := c.begin(KindDeleteTimer)
	if err != nil {
		return err
	}
	err = c.store.DeleteTimer(ctx, id, path, fireAt)
	in := Input{Path: path, FireAt: fireAt}
	c.finish(Operation{Kind: KindDeleteTimer, Execution: id, Input: in, Output: classify(KindDeleteTimer, err), Call: call})
	return err
}

// readOutput turns a read result that could not be described (the store
// returned something that is not valid JSON) into a failed read and an
// error for the caller.
func readOutput(out Output, err error) (Output, error) {
	if err != nil {
		err = fmt.Errorf("describe read result: %w", err)
		return Output{Outcome: OutcomeFailed, Error: err.Error()}, err
	}
	return out, nil
}
