package guarded

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

func commit(t *testing.T, traceMax int) Commit {
	t.Helper()
	b := model.Batch{
		Emits:            []model.Emit{{TargetID: model.Ptr("x"), Event: model.Event{Name: "e"}}, {Event: model.Event{Name: "f"}}},
		ProcessedEventID: model.Ptr("ev"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "p", FireAt: 1.5}, {Action: model.TimerCancel, Path: "q"}},
		Spawns:           []model.Spawn{{ChildID: "c", RootPath: "r"}},
		Trace:            json.RawMessage(`{"b":1, "a":2}`),
	}
	c, err := Prepare(&model.Execution{ID: "a", DefinitionID: "d", Version: 3}, b, traceMax)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The list is the CAS, then one statement per side-write in the seed's
// order, each carrying the guard's condition and parameters.
func TestStatements(t *testing.T) {
	c := commit(t, 5)
	if c.New() != 4 || !strings.Contains(c.Data, `"version":4`) || *c.Trace != `{"a":2,"b":1}` {
		t.Fatalf("prepared %+v", c)
	}
	wantTables := []string{"executions", "outbox", "outbox", "processed_events", "timers", "timers", "timers", "spawns", "trace", "trace"}
	for _, g := range []Guard{OnData, OnVersion, Unguarded} {
		list := Statements(c, g)
		if len(list) != len(wantTables) {
			t.Fatalf("%v: %d statements, want %d", g, len(list), len(wantTables))
		}
		for i, st := range list {
			if !strings.Contains(st.SQL, wantTables[i]) {
				t.Errorf("%v: statement %d is not on %s: %s", g, i, wantTables[i], st.SQL)
			}
			if n := strings.Count(st.SQL, "?"); n != len(st.Args) {
				t.Errorf("%v: statement %d has %d placeholders and %d arguments: %s", g, i, n, len(st.Args), st.SQL)
			}
			if i == 0 {
				continue
			}
			guard := st.Args[len(st.Args)-1]
			switch g {
			case OnData:
				if !strings.HasSuffix(st.SQL, "EXISTS (SELECT 1 FROM executions WHERE id = ? AND data = ?)") || guard != c.Data {
					t.Errorf("statement %d is not guarded on our data: %s", i, st.SQL)
				}
			case OnVersion:
				if !strings.HasSuffix(st.SQL, "EXISTS (SELECT 1 FROM executions WHERE id = ? AND version = ?)") || guard != int64(4) {
					t.Errorf("statement %d is not guarded on the new version: %s", i, st.SQL)
				}
			case Unguarded:
				if strings.Contains(st.SQL, "EXISTS") {
					t.Errorf("statement %d is guarded: %s", i, st.SQL)
				}
			}
		}
	}
	if w := CAS(c).Wire(); w[0] != CAS(c).SQL || len(w) != 8 {
		t.Errorf("wire form %v", w)
	}
	if n := len(SideWrites(commit(t, 0), OnData)); n != len(wantTables)-2 {
		t.Errorf("without a cap: %d side-writes, want no trim", n)
	}
}

// Prepare rejects what the reference rejects.
func TestPrepareRejects(t *testing.T) {
	exe := &model.Execution{ID: "a"}
	for name, b := range map[string]model.Batch{
		"timer action":  {Timers: []model.TimerOp{{Action: "later", Path: "p"}}},
		"spawn context": {Spawns: []model.Spawn{{ChildID: "c", Context: json.RawMessage(`[1]`)}}},
		"trace":         {Trace: json.RawMessage(`"text"`)},
	} {
		if _, err := Prepare(exe, b, 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
