package model

import (
	"math"
	"strings"
	"testing"
)

// TestDiffTellsRowsApartAsTheirTextDoes: Diff's shortcut for equal rows
// (no formatting) says equal only where the rows' texts are equal: 0 and
// -0 print apart and differ, two NULLs or two equal target ids at different
// addresses are equal, NULL and "" differ, and seq values count only with
// ExactSeqs.
func TestDiffTellsRowsApartAsTheirTextDoes(t *testing.T) {
	a, a2, empty := "a", "a", ""
	base := func() *Dump {
		return &Dump{
			Executions: []ExecutionRow{{ID: "e", DefinitionID: "d", Data: `{"x":1}`, Version: 2}},
			Outbox:     []OutboxRow{{Seq: 1, TargetID: &a, Event: `{"n":1}`}, {Seq: 2, Event: `{}`}},
			Processed:  []ProcessedRow{{ExecutionID: "e", EventID: "v"}},
			Timers:     []TimerRow{{ExecutionID: "e", Path: "p", FireAt: 0}},
			Spawns:     []SpawnRow{{Seq: 1, ParentID: "e", ChildID: "c", RootPath: "r", Context: `{}`}},
			Trace:      []TraceRow{{ExecutionID: "e", Idx: 0, Entry: `{}`}},
		}
	}
	cases := []struct {
		name   string
		change func(d *Dump)
		exact  bool
		differ string // "" when equal
	}{
		{"the same rows", func(*Dump) {}, false, ""},
		{"an equal target id elsewhere in memory", func(d *Dump) { d.Outbox[0].TargetID = &a2 }, true, ""},
		{"another seq, seqs not compared", func(d *Dump) { d.Outbox[1].Seq, d.Spawns[0].Seq = 7, 9 }, false, ""},
		{"another seq, ExactSeqs", func(d *Dump) { d.Spawns[0].Seq = 9 }, true, "spawns row 0"},
		{"-0 for 0", func(d *Dump) { d.Timers[0].FireAt = math.Copysign(0, -1) }, false, "fire_at=-0"},
		{"NULL for a target id", func(d *Dump) { d.Outbox[0].TargetID = nil }, false, "outbox row 0"},
		{`"" for NULL`, func(d *Dump) { d.Outbox[1].TargetID = &empty }, false, "outbox row 1"},
		{"another version", func(d *Dump) { d.Executions[0].Version = 3 }, false, "version=3"},
		{"another entry", func(d *Dump) { d.Trace[0].Entry = `{"y":2}` }, false, "trace row 0"},
		{"another event id", func(d *Dump) { d.Processed[0].EventID = "w" }, false, "processed_events row 0"},
		{"another root path", func(d *Dump) { d.Spawns[0].RootPath = "q" }, false, "spawns row 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := base()
			c.change(got)
			diff := Diff(base(), got, DiffOptions{ExactSeqs: c.exact})
			switch {
			case c.differ == "" && len(diff) > 0:
				t.Errorf("want equal, got %q", diff)
			case c.differ != "" && (len(diff) != 1 || !strings.Contains(diff[0], c.differ)):
				t.Errorf("want one difference naming %q, got %q", c.differ, diff)
			}
		})
	}
}

// BenchmarkDiffEqual is the conformance suite's comparison after a step
// that changed nothing: two equal dumps of a few rows per table.
func BenchmarkDiffEqual(b *testing.B) {
	id := "e1"
	d := &Dump{}
	for i := range 4 {
		d.Executions = append(d.Executions, ExecutionRow{ID: string(rune('a' + i)), DefinitionID: "def-a", Data: `{"id":"a","status":"running","version":3,"vars":{"k":[1,2,3]}}`, Version: 3})
		d.Outbox = append(d.Outbox, OutboxRow{Seq: int64(i + 1), TargetID: &id, Event: `{"name":"go","data":{"a":1}}`})
		d.Processed = append(d.Processed, ProcessedRow{ExecutionID: "e1", EventID: string(rune('a' + i))})
		d.Timers = append(d.Timers, TimerRow{ExecutionID: "e1", Path: string(rune('a' + i)), FireAt: 2.5})
		d.Spawns = append(d.Spawns, SpawnRow{Seq: int64(i + 1), ParentID: "e1", ChildID: "c", RootPath: "r", Context: `{"k":1}`})
		d.Trace = append(d.Trace, TraceRow{ExecutionID: "e1", Idx: int64(i), Entry: `{"step":1}`})
	}
	for b.Loop() {
		if diff := Diff(d, d, DiffOptions{}); len(diff) > 0 {
			b.Fatal(diff)
		}
	}
}
