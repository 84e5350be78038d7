package linearizability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/storecheck/storecheck/model"
)

// History is a recorded run: what the checker needs besides the operations,
// and the operations in the order they returned.
type History struct {
	Meta Meta
	Ops  []Operation
}

// Meta describes the run a history came from. It is the optional first line
// of a JSON-lines history, as {"meta": {...}}.
type Meta struct {
	// TraceMax is the store's trace cap; 0 means unbounded. A history file
	// without a meta line is read with model.DefaultTraceMax.
	TraceMax int `json:"trace_max"`
	// Seed, Scenario and Store say how to reproduce the run; informative.
	Seed     uint64 `json:"seed,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	Store    string `json:"store,omitempty"`
}

// DefaultMeta is the meta of a history that states none.
func DefaultMeta() Meta { return Meta{TraceMax: model.DefaultTraceMax} }

// metaLine is the shape of the first line.
type metaLine struct {
	Meta *Meta `json:"meta"`
}

// WriteJSONL writes h as JSON lines: the meta line, then one operation per
// line.
func WriteJSONL(w io.Writer, h History) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	meta := h.Meta
	if err := enc.Encode(metaLine{Meta: &meta}); err != nil {
		return fmt.Errorf("write history meta: %w", err)
	}
	for i := range h.Ops {
		if err := enc.Encode(&h.Ops[i]); err != nil {
			return fmt.Errorf("write history operation %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// ReadJSONL reads a history written by WriteJSONL (or by hand). Blank lines
// are skipped. A line that is not one well-formed operation is an
// ErrMalformed error naming its line number.
func ReadJSONL(r io.Reader) (History, error) {
	h := History{Meta: DefaultMeta()}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if line == 1 && bytes.HasPrefix(raw, []byte(`{"meta"`)) {
			m := metaLine{Meta: &h.Meta}
			if err := strictUnmarshal(raw, &m); err != nil {
				return History{}, fmt.Errorf("%w: line %d: meta: %v", ErrMalformed, line, err)
			}
			continue
		}
		var op Operation
		if err := strictUnmarshal(raw, &op); err != nil {
			return History{}, fmt.Errorf("%w: line %d: %v", ErrMalformed, line, err)
		}
		if err := op.validate(); err != nil {
			return History{}, fmt.Errorf("%w: line %d: %v", ErrMalformed, line, err)
		}
		h.Ops = append(h.Ops, op)
	}
	if err := sc.Err(); err != nil {
		return History{}, fmt.Errorf("read history: %w", err)
	}
	return h, nil
}

// strictUnmarshal decodes exactly one JSON value with no unknown fields.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// SaveFile writes h to path as JSON lines.
func SaveFile(path string, h History) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("save history: %w", cerr)
		}
	}()
	return WriteJSONL(f, h)
}

// LoadFile reads a JSON-lines history from path.
func LoadFile(path string) (History, error) {
	f, err := os.Open(path)
	if err != nil {
		return History{}, fmt.Errorf("load history: %w", err)
	}
	defer f.Close()
	h, err := ReadJSONL(f)
	if err != nil {
		return History{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
