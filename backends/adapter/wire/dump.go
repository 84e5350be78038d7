package wire

import (
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// Dump is the result of dump: every row of the six tables, JSON columns as
// the text stored.
type Dump struct {
	Executions []ExecutionRow `json:"executions"`
	Outbox     []OutboxRow    `json:"outbox"`
	Processed  []ProcessedRow `json:"processed_events"`
	Timers     []TimerRow     `json:"timers"`
	Spawns     []SpawnRow     `json:"spawns"`
	Trace      []TraceRow     `json:"trace"`
}

// ExecutionRow is one row of executions.
type ExecutionRow struct {
	ID           string `json:"id"`
	DefinitionID string `json:"definition_id"`
	Data         string `json:"data"`
	Version      int64  `json:"version"`
}

// OutboxRow is one row of outbox.
type OutboxRow struct {
	Seq      int64   `json:"seq"`
	TargetID *string `json:"target_id"`
	Event    string  `json:"event"`
}

// ProcessedRow is one row of processed_events.
type ProcessedRow struct {
	ExecutionID string `json:"execution_id"`
	EventID     string `json:"event_id"`
}

// TimerRow is one row of timers.
type TimerRow struct {
	ExecutionID string  `json:"execution_id"`
	Path        string  `json:"path"`
	FireAt      float64 `json:"fire_at"`
}

// SpawnRow is one row of spawns.
type SpawnRow struct {
	Seq      int64  `json:"seq"`
	ParentID string `json:"parent_id"`
	ChildID  string `json:"child_id"`
	RootPath string `json:"root_path"`
	Context  string `json:"context"`
}

// TraceRow is one row of trace.
type TraceRow struct {
	ExecutionID string `json:"execution_id"`
	Idx         int64  `json:"idx"`
	Entry       string `json:"entry"`
}

// ModelDump converts a dump, canonicalising its JSON columns and sorting
// its rows, so that it compares with the reference model's.
func (d Dump) ModelDump() (*model.Dump, error) {
	out := &model.Dump{}
	for _, r := range d.Executions {
		data, err := model.CanonicalJSON([]byte(r.Data))
		if err != nil {
			return nil, fmt.Errorf("executions row %q data: %w", r.ID, err)
		}
		out.Executions = append(out.Executions, model.ExecutionRow{ID: r.ID, DefinitionID: r.DefinitionID, Data: data, Version: r.Version})
	}
	for _, r := range d.Outbox {
		ev, err := model.CanonicalJSON([]byte(r.Event))
		if err != nil {
			return nil, fmt.Errorf("outbox row seq %d event: %w", r.Seq, err)
		}
		out.Outbox = append(out.Outbox, model.OutboxRow{Seq: r.Seq, TargetID: r.TargetID, Event: ev})
	}
	for _, r := range d.Processed {
		out.Processed = append(out.Processed, model.ProcessedRow(r))
	}
	for _, r := range d.Timers {
		out.Timers = append(out.Timers, model.TimerRow(r))
	}
	for _, r := range d.Spawns {
		c, err := model.CanonicalJSON([]byte(r.Context))
		if err != nil {
			return nil, fmt.Errorf("spawns row seq %d context: %w", r.Seq, err)
		}
		out.Spawns = append(out.Spawns, model.SpawnRow{Seq: r.Seq, ParentID: r.ParentID, ChildID: r.ChildID, RootPath: r.RootPath, Context: c})
	}
	for _, r := range d.Trace {
		e, err := model.CanonicalJSON([]byte(r.Entry))
		if err != nil {
			return nil, fmt.Errorf("trace row %q/%d entry: %w", r.ExecutionID, r.Idx, err)
		}
		out.Trace = append(out.Trace, model.TraceRow{ExecutionID: r.ExecutionID, Idx: r.Idx, Entry: e})
	}
	out.Sort()
	return out, nil
}

// NewDump converts a model dump for the wire.
func NewDump(d *model.Dump) Dump {
	out := Dump{
		Executions: make([]ExecutionRow, 0, len(d.Executions)), Outbox: make([]OutboxRow, 0, len(d.Outbox)),
		Processed: make([]ProcessedRow, 0, len(d.Processed)), Timers: make([]TimerRow, 0, len(d.Timers)),
		Spawns: make([]SpawnRow, 0, len(d.Spawns)), Trace: make([]TraceRow, 0, len(d.Trace)),
	}
	for _, r := range d.Executions {
		out.Executions = append(out.Executions, ExecutionRow(r))
	}
	for _, r := range d.Outbox {
		out.Outbox = append(out.Outbox, OutboxRow(r))
	}
	for _, r := range d.Processed {
		out.Processed = append(out.Processed, ProcessedRow(r))
	}
	for _, r := range d.Timers {
		out.Timers = append(out.Timers, TimerRow(r))
	}
	for _, r := range d.Spawns {
		out.Spawns = append(out.Spawns, SpawnRow(r))
	}
	for _, r := range d.Trace {
		out.Trace = append(out.Trace, TraceRow(r))
	}
	return out
}
