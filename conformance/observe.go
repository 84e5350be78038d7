package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/storecheck/storecheck/model"
)

// tables returns the six tables of s for comparison: the store's own Dump when
// it has one, otherwise what its public reads show (observe), probing the
// dedupe ledger for the state machine's event ids and for events, the ids an
// example wrote besides those.
func tables(ctx context.Context, s model.Store, events ...string) (*model.Dump, error) {
	if d, ok := s.(model.Dumper); ok {
		dump, err := d.Dump(ctx)
		if err != nil {
			return nil, fmt.Errorf("dump tables: %w", err)
		}
		dump.Sort()
		return dump, nil
	}
	return observe(ctx, s, events...)
}

// observe rebuilds the tables the state machine can have written from public
// reads alone: every execution id and event id of the pools, every pending
// entry, every timer and every trace. It is how a store without Dump (an
// out-of-process adapter, say) is still compared table by table. The ledger
// is probed for the pool's event ids and for events: is_processed cannot
// list it, so a row of any other event id is not seen.
func observe(ctx context.Context, s model.Store, events ...string) (*model.Dump, error) {
	d := &model.Dump{}
	ids := append([]string{missingID}, executionIDs...)
	for _, id := range ids {
		exe, err := s.Load(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("observe: load %q: %w", id, err)
		}
		if exe != nil {
			data, err := json.Marshal(exe)
			if err != nil {
				return nil, fmt.Errorf("observe: encode %q: %w", id, err)
			}
			d.Executions = append(d.Executions, model.ExecutionRow{ID: exe.ID, DefinitionID: exe.DefinitionID, Data: string(data), Version: exe.Version})
		}
		for _, ev := range append(slices.Clip(eventIDs), events...) {
			ok, err := s.IsProcessed(ctx, id, ev)
			if err != nil {
				return nil, fmt.Errorf("observe: is_processed %q %q: %w", id, ev, err)
			}
			if ok {
				d.Processed = append(d.Processed, model.ProcessedRow{ExecutionID: id, EventID: ev})
			}
		}
		trace, err := s.ReadTrace(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("observe: read_trace %q: %w", id, err)
		}
		for _, e := range trace {
			entry, err := model.CanonicalJSON(e.Entry)
			if err != nil {
				return nil, fmt.Errorf("observe: trace of %q: %w", id, err)
			}
			d.Trace = append(d.Trace, model.TraceRow{ExecutionID: id, Idx: e.Index, Entry: entry})
		}
	}
	outbox, err := s.PendingOutbox(ctx)
	if err != nil {
		return nil, fmt.Errorf("observe: pending_outbox: %w", err)
	}
	for _, e := range outbox {
		ev, err := e.Event.Canonical()
		if err != nil {
			return nil, fmt.Errorf("observe: outbox seq %d: %w", e.Seq, err)
		}
		d.Outbox = append(d.Outbox, model.OutboxRow{Seq: e.Seq, TargetID: e.TargetID, Event: ev})
	}
	spawns, err := s.PendingSpawns(ctx)
	if err != nil {
		return nil, fmt.Errorf("observe: pending_spawns: %w", err)
	}
	for _, e := range spawns {
		c, err := model.CanonicalJSON(e.Context)
		if err != nil {
			return nil, fmt.Errorf("observe: spawn seq %d: %w", e.Seq, err)
		}
		d.Spawns = append(d.Spawns, model.SpawnRow{Seq: e.Seq, ParentID: e.ParentID, ChildID: e.ChildID, RootPath: e.RootPath, Context: c})
	}
	timers, err := s.DueTimers(ctx, math.MaxFloat64)
	if err != nil {
		return nil, fmt.Errorf("observe: due_timers: %w", err)
	}
	for _, t := range timers {
		d.Timers = append(d.Timers, model.TimerRow(t))
	}
	d.Sort()
	return d, nil
}
