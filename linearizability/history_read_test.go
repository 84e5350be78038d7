package linearizability

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestReadJSONLInOrderAndFirstError: a history of several decoding batches
// reads back operation for operation, and of two malformed lines in
// different batches the error names the first.
func TestReadJSONLInOrderAndFirstError(t *testing.T) {
	h := simulate(t, simConfig{ops: 3000, clients: 8, execs: 20, traceMax: model.DefaultTraceMax, seed: 3})
	if len(h.Ops) < 3*batchLines {
		t.Fatalf("%d operations, want more than three batches", len(h.Ops))
	}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, h); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSONL(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Ops) != len(h.Ops) {
		t.Fatalf("read %d operations, wrote %d", len(back.Ops), len(h.Ops))
	}
	for i := range h.Ops {
		if back.Ops[i].Call != h.Ops[i].Call || back.Ops[i].Client != h.Ops[i].Client || back.Ops[i].Kind != h.Ops[i].Kind {
			t.Fatalf("operation %d read back as %+v, written %+v", i, back.Ops[i], h.Ops[i])
		}
	}
	lines := strings.Split(buf.String(), "\n")
	lines[2*batchLines+10] = `{"kind":"load","nonsense":1}`
	lines[batchLines+5] = `{not json`
	_, err = ReadJSONL(strings.NewReader(strings.Join(lines, "\n")))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 1030:") {
		t.Fatalf("want the first malformed line (1030) named, got %v", err)
	}
}
