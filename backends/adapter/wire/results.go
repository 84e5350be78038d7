package wire

import (
	"encoding/json"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// The results of each operation, as an adapter writes them and the harness
// reads them back into the model's types.

// VersionResult is the result of commit and save.
type VersionResult struct {
	Version int64 `json:"version"`
}

// LoadForEventResult is the result of load_for_event.
type LoadForEventResult struct {
	Execution json.RawMessage `json:"execution"` // null: no execution
	Processed bool            `json:"processed"`
}

// Summary is one item of a list_executions page.
type Summary struct {
	ID           string  `json:"id"`
	DefinitionID string  `json:"definition_id"`
	Version      int64   `json:"version"`
	Status       string  `json:"status"`
	Outcome      *string `json:"outcome"`
	ActivePath   string  `json:"active_path"`
	ParentID     *string `json:"parent_id"`
}

// Page is the result of list_executions.
type Page struct {
	Items []Summary `json:"items"`
	Next  *string   `json:"next"` // null: no rows remain
}

// OutboxEntry is one item of pending_outbox.
type OutboxEntry struct {
	Seq      int64           `json:"seq"`
	TargetID *string         `json:"target_id"`
	Event    json.RawMessage `json:"event"`
}

// SpawnEntry is one item of pending_spawns.
type SpawnEntry struct {
	Seq      int64           `json:"seq"`
	ParentID string          `json:"parent_id"`
	ChildID  string          `json:"child_id"`
	RootPath string          `json:"root_path"`
	Context  json.RawMessage `json:"context"`
}

// DueTimer is one item of due_timers.
type DueTimer struct {
	ExecutionID string  `json:"execution_id"`
	Path        string  `json:"path"`
	FireAt      float64 `json:"fire_at"`
}

// TraceEntry is one item of read_trace.
type TraceEntry struct {
	Index int64           `json:"index"`
	Entry json.RawMessage `json:"entry"`
}

// DecodeExecution reads an execution result; null is none. The engine's own
// fields are canonicalised, so that the result does not depend on how the
// adapter's language formats JSON.
func DecodeExecution(raw json.RawMessage) (*model.Execution, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var e model.Execution
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	for k, v := range e.Extra {
		c, err := model.CanonicalJSON(v)
		if err != nil {
			return nil, fmt.Errorf("execution field %q: %w", k, err)
		}
		e.Extra[k] = json.RawMessage(c)
	}
	return &e, nil
}

// ModelPage converts a page; an empty page has nil Items, as the reference
// model's.
func (p Page) ModelPage() model.Page {
	var out model.Page
	for _, s := range p.Items {
		out.Items = append(out.Items, model.ExecutionSummary{ID: s.ID, DefinitionID: s.DefinitionID, Version: s.Version,
			Status: s.Status, Outcome: s.Outcome, ActivePath: s.ActivePath, ParentID: s.ParentID})
	}
	if p.Next != nil {
		out.Next = *p.Next
	}
	return out
}

// NewPage converts a model page.
func NewPage(p model.Page) Page {
	out := Page{Items: make([]Summary, 0, len(p.Items))}
	for _, s := range p.Items {
		out.Items = append(out.Items, Summary{ID: s.ID, DefinitionID: s.DefinitionID, Version: s.Version,
			Status: s.Status, Outcome: s.Outcome, ActivePath: s.ActivePath, ParentID: s.ParentID})
	}
	if p.Next != "" {
		out.Next = &p.Next
	}
	return out
}

// ModelOutbox converts pending outbox entries; each event must be an object.
func ModelOutbox(entries []OutboxEntry) ([]model.OutboxEntry, error) {
	out := make([]model.OutboxEntry, 0, len(entries))
	for i, e := range entries {
		if _, err := jsonObject(e.Event); err != nil {
			return nil, fmt.Errorf("entry %d event: %w", i, err)
		}
		ev, err := model.ParseEvent(string(e.Event))
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, model.OutboxEntry{Seq: e.Seq, TargetID: e.TargetID, Event: ev})
	}
	return out, nil
}

// ModelSpawns converts pending spawn intents; contexts are canonicalised.
func ModelSpawns(entries []SpawnEntry) ([]model.SpawnEntry, error) {
	out := make([]model.SpawnEntry, 0, len(entries))
	for i, e := range entries {
		c, err := jsonObject(e.Context)
		if err != nil {
			return nil, fmt.Errorf("entry %d context: %w", i, err)
		}
		out = append(out, model.SpawnEntry{Seq: e.Seq, ParentID: e.ParentID, ChildID: e.ChildID, RootPath: e.RootPath, Context: c})
	}
	return out, nil
}

// ModelTimers converts due timers; none is nil, as in the reference model.
func ModelTimers(timers []DueTimer) []model.DueTimer {
	var out []model.DueTimer
	for _, t := range timers {
		out = append(out, model.DueTimer(t))
	}
	return out
}

// ModelTrace converts a trace; entries are canonicalised.
func ModelTrace(entries []TraceEntry) ([]model.TraceEntry, error) {
	out := make([]model.TraceEntry, 0, len(entries))
	for i, e := range entries {
		c, err := jsonObject(e.Entry)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, model.TraceEntry{Index: e.Index, Entry: c})
	}
	return out, nil
}

// jsonObject canonicalises raw, which must be a JSON object.
func jsonObject(raw json.RawMessage) (json.RawMessage, error) {
	c, err := model.CanonicalJSON(raw)
	if err != nil {
		return nil, err
	}
	if c[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %.40s", c)
	}
	return json.RawMessage(c), nil
}

// NewOutbox converts model outbox entries for the wire.
func NewOutbox(entries []model.OutboxEntry) ([]OutboxEntry, error) {
	out := make([]OutboxEntry, 0, len(entries))
	for _, e := range entries {
		ev, err := Marshal(e.Event)
		if err != nil {
			return nil, fmt.Errorf("outbox seq %d: %w", e.Seq, err)
		}
		out = append(out, OutboxEntry{Seq: e.Seq, TargetID: e.TargetID, Event: ev})
	}
	return out, nil
}

// NewSpawns converts model spawn intents for the wire.
func NewSpawns(entries []model.SpawnEntry) []SpawnEntry {
	out := make([]SpawnEntry, 0, len(entries))
	for _, e := range entries {
		ctx := e.Context
		if len(ctx) == 0 {
			ctx = json.RawMessage("{}")
		}
		out = append(out, SpawnEntry{Seq: e.Seq, ParentID: e.ParentID, ChildID: e.ChildID, RootPath: e.RootPath, Context: ctx})
	}
	return out
}

// NewTimers converts model due timers for the wire.
func NewTimers(timers []model.DueTimer) []DueTimer {
	out := make([]DueTimer, 0, len(timers))
	for _, t := range timers {
		out = append(out, DueTimer(t))
	}
	return out
}

// NewTrace converts a model trace for the wire.
func NewTrace(entries []model.TraceEntry) []TraceEntry {
	out := make([]TraceEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, TraceEntry{Index: e.Index, Entry: e.Entry})
	}
	return out
}
