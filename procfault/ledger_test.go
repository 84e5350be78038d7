package procfault

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// commitOf is a crash-mode commit of execution e0 from version from, with
// token tok: an emit, a dedupe marker, a timer and a trace step.
func commitOf(tok string, from int64, fireAt float64) *wireCommit {
	exe := &model.Execution{ID: "e0", DefinitionID: "storecheck", Version: from, Status: "running",
		Extra: map[string]json.RawMessage{"token": jsonString(tok)}}
	b := model.Batch{
		Emits:            []model.Emit{{Event: model.Event{ID: tok + "/e0", Name: "tick"}}},
		ProcessedEventID: model.Ptr(tok + "/p"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "t0", FireAt: fireAt}},
		Trace:            json.RawMessage(`{"token":"` + tok + `"}`),
	}
	return toWire(exe, b)
}

// tablesAfter is the dump of a reference store after commits, each given
// with the batch it really wrote.
func tablesAfter(t *testing.T, commits ...func(*model.Reference)) *model.Dump {
	t.Helper()
	ref := model.NewReference(model.DefaultConfig())
	for _, c := range commits {
		c(ref)
	}
	d, err := ref.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return roundTrip(t, d)
}

// roundTrip sends d through JSON, as a worker's recovered message does.
func roundTrip(t *testing.T, d *model.Dump) *model.Dump {
	t.Helper()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out model.Dump
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// apply commits c with the batch keep leaves of it.
func apply(t *testing.T, c *wireCommit, keep func(model.Batch) model.Batch) func(*model.Reference) {
	return func(ref *model.Reference) {
		if err := ref.Commit(context.Background(), c.Exe.Clone(), keep(c.batch())); err != nil {
			t.Fatal(err)
		}
	}
}

func whole(b model.Batch) model.Batch   { return b }
func rowOnly(model.Batch) model.Batch   { return model.Batch{} }
func noEmits(b model.Batch) model.Batch { b.Emits = nil; return b }

func TestLedgerVerify(t *testing.T) {
	acked, inflight := commitOf("k0-1", 0, 11), commitOf("k0-2", 1, 12)
	other := commitOf("k9-9", 1, 13) // another commit from version 1: the in-flight one's side-writes under another row
	other.Emits, other.Processed, other.Timers, other.Trace = inflight.Emits, inflight.Processed, inflight.Timers, json.RawMessage(`{"token":"k0-2"}`)
	phantom := commitOf("k7-7", 0, 14) // a commit nobody made, on another execution
	phantom.Exe.ID = "e1"
	cases := []struct {
		name      string
		integrity string
		got       *model.Dump
		applied   bool
		want      error
		says      string
	}{
		{"in flight not applied", "ok", tablesAfter(t, apply(t, acked, whole)), false, nil, ""},
		{"in flight applied", "ok", tablesAfter(t, apply(t, acked, whole), apply(t, inflight, whole)), true, nil, ""},
		{"damaged file", "*** in database main *** Page 3 is never used", tablesAfter(t, apply(t, acked, whole)), false, ErrIntegrity, "Page 3"},
		{"acknowledged commit lost", "ok", tablesAfter(t), false, ErrDurability, "k0-1 (execution e0 at version 1) is lost"},
		{"acknowledged emit lost", "ok", tablesAfter(t, apply(t, acked, noEmits)), false, ErrDurability, "emit k0-1/e0 is missing"},
		{"row without side-writes", "ok", tablesAfter(t, apply(t, acked, whole), apply(t, inflight, rowOnly)), false, ErrAtomicity, "advanced to version 2 but its emit k0-2/e0, dedupe marker k0-2/p, timer t0 at 12, trace step are missing"},
		{"rows nobody committed", "ok", tablesAfter(t, apply(t, acked, whole), apply(t, phantom, whole)), false, ErrDurability, "not what the acknowledged commits leave: executions: unexpected row"},
		{"side-writes without row", "ok", tablesAfter(t, apply(t, acked, whole), apply(t, other, whole)), false, ErrAtomicity, "did not advance to version 2 but its emit k0-2/e0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger()
			for _, m := range []message{
				{Type: msgBegin, N: 1, Commit: acked}, {Type: msgPreCommit, N: 1}, {Type: msgAck, N: 1},
				{Type: msgBegin, N: 2, Commit: inflight}, {Type: msgPreCommit, N: 2},
			} {
				l.observe(m)
			}
			applied, err := l.verify(context.Background(), c.integrity, c.got)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			if err != nil && !strings.Contains(err.Error(), c.says) {
				t.Errorf("the error does not say %q: %v", c.says, err)
			}
			if err == nil && applied != c.applied {
				t.Errorf("applied: want %v, got %v", c.applied, applied)
			}
			if err == nil && (l.inflight != nil || len(l.pending) > 0) {
				t.Errorf("verified commits still pending: %+v", l)
			}
		})
	}
}
