package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/storecheck/storecheck/model"
)

// The args of each operation, as the harness writes them and an adapter
// reads them. Nullable values are pointers or json.RawMessage and are always
// written, as null when absent.

// ExecutionArgs are the args of save.
type ExecutionArgs struct {
	Execution json.RawMessage `json:"execution"`
}

// CommitArgs are the args of commit.
type CommitArgs struct {
	Execution        json.RawMessage `json:"execution"`
	Emits            []Emit          `json:"emits"`
	ProcessedEventID *string         `json:"processed_event_id"`
	Timers           []TimerOp       `json:"timers"`
	Spawns           []Spawn         `json:"spawns"`
	Trace            json.RawMessage `json:"trace"` // an object, or null for no step
}

// Emit is one event for the outbox.
type Emit struct {
	TargetID *string         `json:"target_id"`
	Event    json.RawMessage `json:"event"`
}

// TimerOp is one timer operation; FireAt is written for schedule only.
type TimerOp struct {
	Action string   `json:"action"`
	Path   string   `json:"path"`
	FireAt *float64 `json:"fire_at,omitempty"`
}

// Spawn is one spawn intent.
type Spawn struct {
	ChildID  string          `json:"child_id"`
	RootPath string          `json:"root_path"`
	Context  json.RawMessage `json:"context"`
}

// IDArgs are the args of load and read_trace.
type IDArgs struct {
	ExecutionID string `json:"execution_id"`
}

// EventArgs are the args of load_for_event and is_processed.
type EventArgs struct {
	ExecutionID string `json:"execution_id"`
	EventID     string `json:"event_id"`
}

// ListArgs are the args of list_executions.
type ListArgs struct {
	DefinitionID *string  `json:"definition_id"`
	Statuses     []string `json:"statuses"`
	RootsOnly    bool     `json:"roots_only"`
	Cursor       *string  `json:"cursor"`
	Limit        int      `json:"limit"`
}

// SeqArgs are the args of ack_outbox and ack_spawn.
type SeqArgs struct {
	Seq int64 `json:"seq"`
}

// NowArgs are the args of due_timers.
type NowArgs struct {
	Now float64 `json:"now"`
}

// TimerArgs are the args of delete_timer.
type TimerArgs struct {
	ExecutionID string  `json:"execution_id"`
	Path        string  `json:"path"`
	FireAt      float64 `json:"fire_at"`
}

// TraceArgs are the args of append_trace.
type TraceArgs struct {
	ExecutionID string          `json:"execution_id"`
	Entry       json.RawMessage `json:"entry"`
}

// TraceMaxArgs are the args of set_trace_max.
type TraceMaxArgs struct {
	TraceMax int `json:"trace_max"`
}

// ErrUnencodable marks a value the protocol cannot carry (invalid JSON, a
// non-finite number): the harness rejects it before sending anything.
var ErrUnencodable = fmt.Errorf("%w: not encodable in the adapter protocol", model.ErrInvalidArgument)

// EncodeExecution is the model's JSON of exe.
func EncodeExecution(exe *model.Execution) (json.RawMessage, error) {
	b, err := exe.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: execution %q: %w", ErrUnencodable, exe.ID, err)
	}
	return b, nil
}

// NewCommitArgs encodes a commit of exe with b. A nil spawn context is sent
// as {}, as the model reads it; any other JSON is sent as given, for the
// adapter to accept or reject.
func NewCommitArgs(exe *model.Execution, b model.Batch) (CommitArgs, error) {
	data, err := EncodeExecution(exe)
	if err != nil {
		return CommitArgs{}, err
	}
	a := CommitArgs{Execution: data, ProcessedEventID: b.ProcessedEventID,
		Emits: []Emit{}, Timers: []TimerOp{}, Spawns: []Spawn{}, Trace: json.RawMessage("null")}
	for i, e := range b.Emits {
		ev, err := Marshal(e.Event)
		if err != nil {
			return CommitArgs{}, fmt.Errorf("%w: emit %d: %w", ErrUnencodable, i, err)
		}
		a.Emits = append(a.Emits, Emit{TargetID: e.TargetID, Event: ev})
	}
	for i, t := range b.Timers {
		op := TimerOp{Action: string(t.Action), Path: t.Path}
		if t.Action == model.TimerSchedule {
			if err := finite(t.FireAt); err != nil {
				return CommitArgs{}, fmt.Errorf("timer op %d: %w", i, err)
			}
			op.FireAt = &t.FireAt
		}
		a.Timers = append(a.Timers, op)
	}
	for i, s := range b.Spawns {
		ctx, err := object(s.Context)
		if err != nil {
			return CommitArgs{}, fmt.Errorf("spawn %d context: %w", i, err)
		}
		a.Spawns = append(a.Spawns, Spawn{ChildID: s.ChildID, RootPath: s.RootPath, Context: ctx})
	}
	if b.Trace != nil {
		if isNull(b.Trace) {
			// null on the wire means "no step"; the model rejects a null step.
			return CommitArgs{}, fmt.Errorf("%w: a trace step of null", ErrUnencodable)
		}
		if a.Trace, err = valid(b.Trace); err != nil {
			return CommitArgs{}, fmt.Errorf("trace: %w", err)
		}
	}
	return a, nil
}

// NewTraceArgs encodes append_trace; a nil entry is sent as {}.
func NewTraceArgs(id string, entry json.RawMessage) (TraceArgs, error) {
	e, err := object(entry)
	if err != nil {
		return TraceArgs{}, fmt.Errorf("trace entry: %w", err)
	}
	return TraceArgs{ExecutionID: id, Entry: e}, nil
}

// NewListArgs encodes list_executions.
func NewListArgs(f model.ListFilter) ListArgs {
	a := ListArgs{DefinitionID: f.DefinitionID, Statuses: f.Statuses, RootsOnly: f.RootsOnly, Limit: f.Limit}
	if a.Statuses == nil {
		a.Statuses = []string{}
	}
	if f.Cursor != "" {
		a.Cursor = &f.Cursor
	}
	return a
}

// finite rejects what JSON cannot carry.
func finite(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%w: %v", ErrUnencodable, f)
	}
	return nil
}

// CheckFinite rejects a non-finite now or fire_at before it is sent.
func CheckFinite(f float64) error { return finite(f) }

// object returns raw as the JSON to send for a value the model reads as an
// object, nil standing for {}.
func object(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	return valid(raw)
}

func valid(raw json.RawMessage) (json.RawMessage, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: invalid JSON %.40q", ErrUnencodable, raw)
	}
	return raw, nil
}

// Model decodes commit args into the execution and batch they carry. A
// malformed value is an error wrapping model.ErrInvalidArgument.
func (a CommitArgs) Model() (*model.Execution, model.Batch, error) {
	exe, err := ModelExecution(a.Execution)
	if err != nil {
		return nil, model.Batch{}, err
	}
	b := model.Batch{ProcessedEventID: a.ProcessedEventID}
	for i, e := range a.Emits {
		ev, err := model.ParseEvent(string(e.Event))
		if err != nil {
			return nil, model.Batch{}, fmt.Errorf("%w: emit %d: %w", model.ErrInvalidArgument, i, err)
		}
		b.Emits = append(b.Emits, model.Emit{TargetID: e.TargetID, Event: ev})
	}
	for _, t := range a.Timers {
		op := model.TimerOp{Action: model.TimerAction(t.Action), Path: t.Path}
		if t.FireAt != nil {
			op.FireAt = *t.FireAt
		}
		b.Timers = append(b.Timers, op)
	}
	for _, s := range a.Spawns {
		b.Spawns = append(b.Spawns, model.Spawn{ChildID: s.ChildID, RootPath: s.RootPath, Context: s.Context})
	}
	if len(a.Trace) > 0 && !isNull(a.Trace) {
		b.Trace = a.Trace
	}
	return exe, b, nil
}

// ModelExecution decodes the execution of commit or save args.
func ModelExecution(raw json.RawMessage) (*model.Execution, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, fmt.Errorf("%w: no execution", model.ErrInvalidArgument)
	}
	var e model.Execution
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("%w: %w", model.ErrInvalidArgument, err)
	}
	return &e, nil
}

// ModelFilter decodes list_executions args.
func (a ListArgs) ModelFilter() model.ListFilter {
	f := model.ListFilter{DefinitionID: a.DefinitionID, Statuses: a.Statuses, RootsOnly: a.RootsOnly, Limit: a.Limit}
	if a.Cursor != nil {
		f.Cursor = *a.Cursor
	}
	return f
}
