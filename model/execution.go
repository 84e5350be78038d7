package model

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Execution is one statechart execution as the store keeps it: the whole value
// is stored as JSON in executions.data, and id, definition_id and version are
// also kept as columns.
//
// The fields listed are those the contract reads (listing projects status,
// outcome, active_path and parent_id out of the JSON). Any other field an engine
// stores travels in Extra, untouched.
type Execution struct {
	ID           string
	DefinitionID string
	// Version is the compare-and-swap counter. A successful commit stores the
	// execution at Version+1 and sets Version to that; a failed one leaves it.
	Version    int64
	Status     string
	Outcome    *string // nullable
	ActivePath string
	ParentID   *string // nullable; nil marks a root execution
	// Context is a JSON object; nil stands for {}.
	Context json.RawMessage
	// Extra holds every other top-level field of the stored JSON.
	Extra map[string]json.RawMessage
}

// knownFields are the keys Execution maps to its own fields (knownKeys).
var knownFields = func() map[string]bool {
	m := make(map[string]bool, len(knownKeys))
	for _, k := range knownKeys {
		m[k] = true
	}
	return m
}()

// MarshalJSON writes the execution as one JSON object with sorted keys, so the
// same execution always gives the same bytes. The rqlite protocol depends on
// that: its side-writes are guarded on the row holding exactly our bytes.
func (e Execution) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 160+len(e.Context)+16*len(e.Extra)))
}

// AppendJSON appends the bytes MarshalJSON returns to dst, so that a caller
// that only hashes them (the history recorder, on every load and commit) can
// reuse one buffer.
func (e *Execution) AppendJSON(dst []byte) ([]byte, error) {
	if ctx, ok := canonicalObjectInPlace(e.Context); ok {
		return appendExecution(dst, e, ctx)
	}
	ctx, err := CanonicalObject(e.Context, "execution context")
	if err != nil {
		return nil, err
	}
	return appendExecution(dst, e, []byte(ctx))
}

// UnmarshalJSON reads what MarshalJSON wrote, or what another implementation
// wrote in any key order; unknown keys land in Extra.
func (e *Execution) UnmarshalJSON(data []byte) error {
	if decodeCanonicalExecution(data, e) {
		return nil
	}
	return e.unmarshalGeneral(data)
}

// unmarshalGeneral is UnmarshalJSON for any document: the definition the
// canonical form's direct reading (decodeCanonicalExecution) must agree
// with.
func (e *Execution) unmarshalGeneral(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("execution json: %w", err)
	}
	var out Execution
	fields := []struct {
		key string
		dst any
	}{
		{"id", &out.ID}, {"definition_id", &out.DefinitionID}, {"version", &out.Version},
		{"status", &out.Status}, {"outcome", &out.Outcome}, {"active_path", &out.ActivePath},
		{"parent_id", &out.ParentID},
	}
	for _, f := range fields {
		v, ok := raw[f.key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, f.dst); err != nil {
			return fmt.Errorf("execution json field %q: %w", f.key, err)
		}
	}
	if v, ok := raw["context"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		c, err := CanonicalObject(v, "execution context")
		if err != nil {
			return err
		}
		out.Context = json.RawMessage(c)
	}
	for k, v := range raw {
		if knownFields[k] {
			continue
		}
		if out.Extra == nil {
			out.Extra = make(map[string]json.RawMessage)
		}
		out.Extra[k] = append(json.RawMessage(nil), v...)
	}
	*e = out
	return nil
}

// Clone returns a deep copy, so a caller's later changes cannot reach a store.
func (e *Execution) Clone() *Execution {
	if e == nil {
		return nil
	}
	c := *e
	c.Outcome = clonePtr(e.Outcome)
	c.ParentID = clonePtr(e.ParentID)
	c.Context = append(json.RawMessage(nil), e.Context...)
	if e.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(e.Extra))
		for k, v := range e.Extra {
			c.Extra[k] = append(json.RawMessage(nil), v...)
		}
	}
	return &c
}

// Summary projects the fields list_executions returns.
func (e *Execution) Summary() ExecutionSummary {
	return ExecutionSummary{
		ID: e.ID, DefinitionID: e.DefinitionID, Version: e.Version, Status: e.Status,
		Outcome: clonePtr(e.Outcome), ActivePath: e.ActivePath, ParentID: clonePtr(e.ParentID),
	}
}

// Event is a message between executions, carried by the outbox. Name is the
// event type; ID identifies one delivery for the dedupe ledger.
type Event struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Canonical returns the event's JSON in canonical form.
func (ev Event) Canonical() (string, error) {
	b, err := marshalNoEscape(ev)
	if err != nil {
		return "", fmt.Errorf("event json: %w", err)
	}
	return CanonicalJSON(b)
}

// Ptr returns a pointer to v; handy for the nullable fields.
func Ptr[T any](v T) *T { return &v }

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
