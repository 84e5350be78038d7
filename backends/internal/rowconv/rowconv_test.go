package rowconv

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestConversions(t *testing.T) {
	if s, err := Text([]byte("2024-01-02")); err != nil || s != "2024-01-02" {
		t.Errorf("Text([]byte) = %q, %v", s, err)
	}
	if _, err := Text(time.Now()); err == nil || !strings.Contains(err.Error(), "AsBlob") {
		t.Errorf("Text(time.Time) = %v, want an error pointing at AsBlob", err)
	}
	if p, err := NullText(nil); err != nil || p != nil {
		t.Errorf("NullText(nil) = %v, %v", p, err)
	}
	for _, v := range []any{int64(3), float64(3), "3", []byte("3"), json.Number("3")} {
		if n, err := Integer(v); err != nil || n != 3 {
			t.Errorf("Integer(%T) = %d, %v", v, n, err)
		}
	}
	for _, v := range []any{2.5, float64(1 << 54), nil, true} {
		if _, err := Integer(v); err == nil {
			t.Errorf("Integer(%T %v) succeeded", v, v)
		}
	}
	for _, v := range []any{float64(1.5), "1.5", []byte("1.5"), json.Number("1.5")} {
		if f, err := Float(v); err != nil || f != 1.5 {
			t.Errorf("Float(%T) = %v, %v", v, f, err)
		}
	}
	if f, err := Float(int64(2)); err != nil || f != 2 {
		t.Errorf("Float(int64) = %v, %v", f, err)
	}
	for _, v := range []any{int64(1), float64(1), true} {
		if b, err := Truth(v); err != nil || !b {
			t.Errorf("Truth(%T 1) = %v, %v", v, b, err)
		}
	}
	if s, err := Canonical(`{"b":1, "a":2}`); err != nil || s != `{"a":2,"b":1}` {
		t.Errorf("Canonical = %q, %v", s, err)
	}
}

func TestRows(t *testing.T) {
	r, err := ExecutionRow([]any{"e", []byte("d"), `{"version":2, "id":"e"}`, float64(2)})
	if err != nil || r.ID != "e" || r.DefinitionID != "d" || r.Data != `{"id":"e","version":2}` || r.Version != 2 {
		t.Errorf("ExecutionRow = %+v, %v", r, err)
	}
	if _, err := ExecutionRow([]any{"e", "d", "{", int64(1)}); err == nil || !strings.HasPrefix(err.Error(), `data of "e": `) {
		t.Errorf("ExecutionRow(bad data) = %v", err)
	}
	o, err := OutboxEntry([]any{int64(4), nil, `{"name":"go","data":{"b":1, "a":2}}`})
	if err != nil || o.Seq != 4 || o.TargetID != nil || o.Event.Name != "go" || string(o.Event.Data) != `{"a":2,"b":1}` {
		t.Errorf("OutboxEntry = %+v, %v", o, err)
	}
	if _, err := SpawnRow([]any{int64(1), "p", nil, "r", "{}"}); err == nil || !strings.HasPrefix(err.Error(), "child_id: ") {
		t.Errorf("SpawnRow(NULL child) = %v", err)
	}
	tr, err := TraceEntry([]any{float64(0), `{"x": 1}`})
	if err != nil || tr.Index != 0 || string(tr.Entry) != `{"x": 1}` {
		t.Errorf("TraceEntry = %+v, %v", tr, err)
	}
}
