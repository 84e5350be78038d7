package linearizability

import (
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// The functions here turn a store call's arguments and results into an
// Operation's Input and Output. They are pure, so that the Recorder and the
// history simulator of the tests record alike.

// commitInput describes a commit of exe with batch b, before the call: the
// version compared, the id of the data written at Expected+1 and every
// side-write's witness.
func commitInput(exe *model.Execution, b model.Batch) (Input, error) {
	next := *exe // DataID only reads: a shallow copy at the next version
	next.Version = exe.Version + 1
	data, err := DataID(&next)
	if err != nil {
		return Input{}, err
	}
	in := Input{Expected: exe.Version, Data: data, Prev: extraString(exe, PrevField)}
	if b.ProcessedEventID != nil {
		in.EventID = *b.ProcessedEventID
	}
	for _, e := range b.Emits {
		in.Emits = append(in.Emits, EmitRef{EventID: e.Event.ID, Target: e.TargetID})
	}
	for _, t := range b.Timers {
		ref := TimerRef{Action: string(t.Action), Path: t.Path}
		if t.Action == model.TimerSchedule {
			ref.FireAt = t.FireAt
		}
		in.Timers = append(in.Timers, ref)
	}
	for _, s := range b.Spawns {
		in.Spawns = append(in.Spawns, s.ChildID)
	}
	if b.Trace != nil {
		id, err := ObjectID(b.Trace)
		if err != nil {
			return Input{}, fmt.Errorf("trace entry: %w", err)
		}
		in.Trace = id
	}
	return in, nil
}

// classify turns the error a call returned into an outcome:
// nil → ok; a *model.StoreConflict from a commit or save → conflict;
// model.ErrNotApplied or model.ErrInvalidArgument → failed (nothing
// happened); any other error → indeterminate for a write, failed for a read
// (a failed read has no effect).
func classify(kind Kind, err error) Output {
	if err == nil {
		return Output{Outcome: OutcomeOK}
	}
	out := Output{Error: err.Error()}
	if c, ok := model.AsConflict(err); ok && kind.IsCommit() {
		out.Outcome, out.Found = OutcomeConflict, c.Found
		return out
	}
	if errors.Is(err, model.ErrNotApplied) || errors.Is(err, model.ErrInvalidArgument) || !kind.IsWrite() {
		out.Outcome = OutcomeFailed
		return out
	}
	out.Outcome = OutcomeIndeterminate
	return out
}

// loadOutput describes what load or load_for_event returned.
func loadOutput(exe *model.Execution, processed bool) (Output, error) {
	out := Output{Outcome: OutcomeOK, Processed: processed}
	if exe == nil {
		return out, nil
	}
	id, err := DataID(exe)
	if err != nil {
		return Output{}, err
	}
	out.Exists, out.Version, out.Data = true, exe.Version, id
	return out, nil
}

// traceItems describes read_trace's result.
func traceItems(entries []model.TraceEntry) ([]TraceItem, error) {
	items := make([]TraceItem, 0, len(entries))
	for _, e := range entries {
		id, err := ObjectID(e.Entry)
		if err != nil {
			return nil, fmt.Errorf("trace entry %d: %w", e.Index, err)
		}
		items = append(items, TraceItem{Index: e.Index, Entry: id})
	}
	return items, nil
}

func outboxItems(entries []model.OutboxEntry) []OutboxItem {
	items := make([]OutboxItem, 0, len(entries))
	for _, e := range entries {
		items = append(items, OutboxItem{Seq: e.Seq, EventID: e.Event.ID, Target: e.TargetID})
	}
	return items
}

func spawnItems(entries []model.SpawnEntry) []SpawnItem {
	items := make([]SpawnItem, 0, len(entries))
	for _, e := range entries {
		items = append(items, SpawnItem{Seq: e.Seq, Parent: e.ParentID, Child: e.ChildID})
	}
	return items
}

func timerItems(timers []model.DueTimer) []DueTimerItem {
	items := make([]DueTimerItem, 0, len(timers))
	for _, t := range timers {
		items = append(items, DueTimerItem{Execution: t.ExecutionID, Path: t.Path, FireAt: t.FireAt})
	}
	return items
}
