package rowconv

import (
	"encoding/json"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// Each decoder below reads one row, given as its column values in the order
// of the statement that selects them (sqlstore.Statements); the matching
// ...Cols constant is how many columns that is. A caller checks or scans
// that width before it calls the decoder. JSON columns of the dump rows come
// back canonical, as model.Dump has them.
const (
	ExecutionCols  = 4 // id, definition_id, data, version
	OutboxCols     = 3 // seq, target_id, event
	ProcessedCols  = 2 // execution_id, event_id
	TimerCols      = 3 // execution_id, path, fire_at
	SpawnCols      = 5 // seq, parent_id, child_id, root_path, context
	TraceCols      = 3 // execution_id, idx, entry
	SummaryCols    = 7 // id, definition_id, version, status, outcome, active_path, parent_id
	TraceEntryCols = 2 // idx, entry
)

// ExecutionRow decodes a dump's executions row.
func ExecutionRow(c []any) (model.ExecutionRow, error) {
	var (
		r   model.ExecutionRow
		err error
	)
	if r.ID, err = Text(c[0]); err != nil {
		return r, fmt.Errorf("id: %w", err)
	}
	if r.DefinitionID, err = Text(c[1]); err != nil {
		return r, fmt.Errorf("definition_id: %w", err)
	}
	data, err := Text(c[2])
	if err != nil {
		return r, fmt.Errorf("data: %w", err)
	}
	if r.Data, err = model.CanonicalJSON([]byte(data)); err != nil {
		return r, fmt.Errorf("data of %q: %w", r.ID, err)
	}
	if r.Version, err = Integer(c[3]); err != nil {
		return r, fmt.Errorf("version: %w", err)
	}
	return r, nil
}

// OutboxRow decodes a dump's outbox row.
func OutboxRow(c []any) (model.OutboxRow, error) {
	var (
		r   model.OutboxRow
		err error
	)
	if r.Seq, err = Integer(c[0]); err != nil {
		return r, fmt.Errorf("seq: %w", err)
	}
	if r.TargetID, err = NullText(c[1]); err != nil {
		return r, fmt.Errorf("target_id: %w", err)
	}
	if r.Event, err = Canonical(c[2]); err != nil {
		return r, fmt.Errorf("event: %w", err)
	}
	return r, nil
}

// ProcessedRow decodes a dump's processed_events row.
func ProcessedRow(c []any) (model.ProcessedRow, error) {
	var (
		r   model.ProcessedRow
		err error
	)
	if r.ExecutionID, err = Text(c[0]); err != nil {
		return r, fmt.Errorf("execution_id: %w", err)
	}
	if r.EventID, err = Text(c[1]); err != nil {
		return r, fmt.Errorf("event_id: %w", err)
	}
	return r, nil
}

// TimerRow decodes a timers row.
func TimerRow(c []any) (model.TimerRow, error) {
	var (
		r   model.TimerRow
		err error
	)
	if r.ExecutionID, err = Text(c[0]); err != nil {
		return r, fmt.Errorf("execution_id: %w", err)
	}
	if r.Path, err = Text(c[1]); err != nil {
		return r, fmt.Errorf("path: %w", err)
	}
	if r.FireAt, err = Float(c[2]); err != nil {
		return r, fmt.Errorf("fire_at: %w", err)
	}
	return r, nil
}

// SpawnRow decodes a spawns row.
func SpawnRow(c []any) (model.SpawnRow, error) {
	var (
		r   model.SpawnRow
		err error
	)
	if r.Seq, err = Integer(c[0]); err != nil {
		return r, fmt.Errorf("seq: %w", err)
	}
	if r.ParentID, err = Text(c[1]); err != nil {
		return r, fmt.Errorf("parent_id: %w", err)
	}
	if r.ChildID, err = Text(c[2]); err != nil {
		return r, fmt.Errorf("child_id: %w", err)
	}
	if r.RootPath, err = Text(c[3]); err != nil {
		return r, fmt.Errorf("root_path: %w", err)
	}
	if r.Context, err = Canonical(c[4]); err != nil {
		return r, fmt.Errorf("context: %w", err)
	}
	return r, nil
}

// TraceRow decodes a dump's trace row.
func TraceRow(c []any) (model.TraceRow, error) {
	var (
		r   model.TraceRow
		err error
	)
	if r.ExecutionID, err = Text(c[0]); err != nil {
		return r, fmt.Errorf("execution_id: %w", err)
	}
	if r.Idx, err = Integer(c[1]); err != nil {
		return r, fmt.Errorf("idx: %w", err)
	}
	if r.Entry, err = Canonical(c[2]); err != nil {
		return r, fmt.Errorf("entry: %w", err)
	}
	return r, nil
}

// Summary decodes a row of ListExecutions.
func Summary(c []any) (model.ExecutionSummary, error) {
	var (
		s   model.ExecutionSummary
		err error
	)
	if s.ID, err = Text(c[0]); err != nil {
		return s, fmt.Errorf("id: %w", err)
	}
	if s.DefinitionID, err = Text(c[1]); err != nil {
		return s, fmt.Errorf("definition_id: %w", err)
	}
	if s.Version, err = Integer(c[2]); err != nil {
		return s, fmt.Errorf("version: %w", err)
	}
	if s.Status, err = Text(c[3]); err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	if s.Outcome, err = NullText(c[4]); err != nil {
		return s, fmt.Errorf("outcome: %w", err)
	}
	if s.ActivePath, err = Text(c[5]); err != nil {
		return s, fmt.Errorf("active_path: %w", err)
	}
	if s.ParentID, err = NullText(c[6]); err != nil {
		return s, fmt.Errorf("parent_id: %w", err)
	}
	return s, nil
}

// OutboxEntry decodes a row of PendingOutbox (the outbox columns); the event
// is parsed from the text as stored.
func OutboxEntry(c []any) (model.OutboxEntry, error) {
	var (
		e   model.OutboxEntry
		err error
	)
	if e.Seq, err = Integer(c[0]); err != nil {
		return e, fmt.Errorf("seq: %w", err)
	}
	if e.TargetID, err = NullText(c[1]); err != nil {
		return e, fmt.Errorf("target_id: %w", err)
	}
	ev, err := Text(c[2])
	if err != nil {
		return e, fmt.Errorf("event: %w", err)
	}
	e.Event, err = model.ParseEvent(ev)
	return e, err
}

// SpawnEntry decodes a row of PendingSpawns (the spawns columns).
func SpawnEntry(c []any) (model.SpawnEntry, error) {
	r, err := SpawnRow(c)
	return model.SpawnEntry{Seq: r.Seq, ParentID: r.ParentID, ChildID: r.ChildID, RootPath: r.RootPath, Context: json.RawMessage(r.Context)}, err
}

// DueTimer decodes a row of DueTimers (the timers columns).
func DueTimer(c []any) (model.DueTimer, error) {
	r, err := TimerRow(c)
	return model.DueTimer(r), err
}

// TraceEntry decodes a row of ReadTrace: idx, entry as stored.
func TraceEntry(c []any) (model.TraceEntry, error) {
	idx, err := Integer(c[0])
	if err != nil {
		return model.TraceEntry{}, fmt.Errorf("idx: %w", err)
	}
	entry, err := Text(c[1])
	if err != nil {
		return model.TraceEntry{}, fmt.Errorf("entry: %w", err)
	}
	return model.TraceEntry{Index: idx, Entry: json.RawMessage(entry)}, nil
}
