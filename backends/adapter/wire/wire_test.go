package wire

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestDecodeStrict: missing fields, nulls where none may be and wrong types
// are errors naming the field; unknown fields are ignored.
func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		raw  string
		want string // "" means no error
	}{
		{`{"items":[],"next":null}`, ""},
		{`{"items":[],"next":null,"later":1}`, ""},
		{`{"items":[]}`, `$: missing field "next"`},
		{`{"items":[{"id":"a","definition_id":"d","version":1,"status":"s","outcome":null,"active_path":"p"}],"next":null}`, `$.items[0]: missing field "parent_id"`},
		{`{"items":[{"id":null,"definition_id":"d","version":1,"status":"s","outcome":null,"active_path":"p","parent_id":null}],"next":null}`, `$.items[0].id: must not be null`},
		{`{"items":[{"id":"a","definition_id":"d","version":"1","status":"s","outcome":null,"active_path":"p","parent_id":null}],"next":null}`, "cannot unmarshal string"},
		{`{"items":{},"next":null}`, `$.items: want an array`},
		{`[]`, `$: want an object: json: cannot unmarshal array`},
		{`null`, `$: want an object, got null`},
	}
	for _, c := range cases {
		var p Page
		err := Decode([]byte(c.raw), &p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Decode(%s): %v", c.raw, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Decode(%s) = %v, want %q", c.raw, err, c.want)
		}
	}
}

func TestDecodeResponse(t *testing.T) {
	for line, want := range map[string]string{
		`{"id":1,"ok":true,"result":null}`: "",
		`{"id":1,"ok":false,"error":{"kind":"conflict","message":"m","execution_id":"e","expected":0,"found":null}}`: "",
		`{"id":1,"ok":true}`:  `"ok": true without "result"`,
		`{"id":1,"ok":false}`: `"ok": false without "error"`,
		`{"id":1,"ok":false,"error":{"kind":"oops","message":""}}`:                                      `unknown error kind "oops"`,
		`{"id":1,"ok":false,"error":{"kind":"conflict","message":"m","expected":0,"found":1}}`:          `missing field "execution_id"`,
		`{"id":1,"ok":false,"error":{"kind":"conflict","message":"m","execution_id":"e","expected":0}}`: `missing field "found"`,
		`{"ok":true,"result":1}`:          `missing field "id"`,
		`{"id":-1,"ok":true,"result":1}`:  "cannot unmarshal number -1",
		`{"id":1,"ok":true,"result":1}{}`: "after top-level value",
	} {
		_, err := DecodeResponse([]byte(line))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("DecodeResponse(%s) = %v, want %q", line, err, want)
		}
	}
}

// TestErrorEncoding: a conflict carries its details, found as null when no
// row exists; other kinds carry only kind and message.
func TestErrorEncoding(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Kind: KindConflict, Message: "m", ExecutionID: "e", Expected: 0}, `{"kind":"conflict","message":"m","execution_id":"e","expected":0,"found":null}`},
		{Error{Kind: KindConflict, Message: "m", ExecutionID: "e", Expected: 2, Found: model.Ptr[int64](3)}, `{"kind":"conflict","message":"m","execution_id":"e","expected":2,"found":3}`},
		{Error{Kind: KindNotApplied, Message: "<&>", ExecutionID: "ignored"}, `{"kind":"not_applied","message":"<&>"}`},
	} {
		line, err := ErrorResponse(7, c.e)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":7,"ok":false,"error":` + c.want + "}\n"
		if string(line) != want {
			t.Errorf("got %s want %s", line, want)
		}
		back, err := DecodeResponse(line[:len(line)-1])
		if err != nil || back.Error == nil || back.Error.Kind != c.e.Kind {
			t.Errorf("round trip of %s: %+v, %v", line, back, err)
		}
	}
}

// TestFloatsRoundTrip: fire_at and now are written so that every double
// reads back as itself.
func TestFloatsRoundTrip(t *testing.T) {
	for _, f := range []float64{0, 1, 2.5, 1700000000.125, 0.1, 1.0 / 3, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, 1e21, 123456789012345680} {
		line, err := EncodeRequest(1, OpDueTimers, NowArgs{Now: f})
		if err != nil {
			t.Fatal(err)
		}
		req, err := DecodeRequest(line[:len(line)-1])
		if err != nil {
			t.Fatal(err)
		}
		var back NowArgs
		if err := Decode(req.Args, &back); err != nil || back.Now != f {
			t.Errorf("%v came back as %v (%v) from %s", f, back.Now, err, line)
		}
	}
	if _, err := NewCommitArgs(&model.Execution{ID: "a"}, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "p", FireAt: math.Inf(1)}}}); err == nil {
		t.Error("an infinite fire_at was accepted")
	}
}

// TestCommitArgsRoundTrip: what the harness encodes, an adapter in Go
// decodes to the same execution and batch; nullables are written as null.
func TestCommitArgsRoundTrip(t *testing.T) {
	exe := &model.Execution{ID: "e", DefinitionID: "d", Version: 4, Status: "running", ActivePath: "a",
		Context: json.RawMessage(`{"k":[1,2]}`), Extra: map[string]json.RawMessage{"engine": json.RawMessage(`{"x":true}`)}}
	b := model.Batch{
		Emits:            []model.Emit{{TargetID: model.Ptr("t"), Event: model.Event{ID: "1", Name: "go", Data: json.RawMessage(`{"a":"<&>"}`)}}, {Event: model.Event{Name: "n"}}},
		ProcessedEventID: model.Ptr("ev"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "p", FireAt: 1.5}, {Action: model.TimerCancel, Path: "q"}},
		Spawns:           []model.Spawn{{ChildID: "c", RootPath: "r"}},
		Trace:            json.RawMessage(`{"step":1}`),
	}
	line, err := EncodeRequest(9, OpCommit, mustCommitArgs(t, exe, b))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"outcome":null`, `"parent_id":null`, `"target_id":null`, `{"action":"cancel","path":"q"}`, `"context":{}`, `"a":"<&>"`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("request %s lacks %s", line, want)
		}
	}
	req, err := DecodeRequest(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	var a CommitArgs
	if err := Decode(req.Args, &a); err != nil {
		t.Fatal(err)
	}
	gotExe, gotBatch, err := a.Model()
	if err != nil {
		t.Fatal(err)
	}
	if w, g := mustJSON(t, exe), mustJSON(t, gotExe); w != g {
		t.Errorf("execution: want %s, got %s", w, g)
	}
	if w, g := mustJSON(t, b), mustJSON(t, gotBatch); w != strings.Replace(g, `"Context":{}`, `"Context":null`, 1) {
		t.Errorf("batch: want %s, got %s", w, g)
	}
}

func mustCommitArgs(t *testing.T, exe *model.Execution, b model.Batch) CommitArgs {
	t.Helper()
	a, err := NewCommitArgs(exe, b)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
