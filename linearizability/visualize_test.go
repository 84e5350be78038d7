package linearizability

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVisualizeIllegalHistory draws the lost update: one self-contained HTML
// file showing the execution's operations, the indeterminate annotations and
// the violations.
func TestVisualizeIllegalHistory(t *testing.T) {
	ctx := context.Background()
	for _, file := range []string{"lost_update.jsonl", "indeterminate_ok.jsonl"} {
		h, err := LoadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Check(ctx, h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "v.html")
		if err := VisualizeFile(ctx, path, h, rep, Options{}); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		html := string(raw)
		for _, want := range []string{"<html", "commit(e1, v1→2, w=c1-1) → ok"} {
			if file == "lost_update.jsonl" && !strings.Contains(html, want) {
				t.Errorf("%s: visualization lacks %q", file, want)
			}
		}
		if file == "lost_update.jsonl" && !strings.Contains(html, "lost update") {
			t.Errorf("%s: visualization lacks the violation annotation", file)
		}
		if file == "indeterminate_ok.jsonl" && !strings.Contains(html, "indeterminate commit") {
			t.Errorf("%s: visualization lacks the indeterminate annotation", file)
		}
	}
}

func TestDescribeOperation(t *testing.T) {
	found := int64(6)
	tests := []struct {
		op   Operation
		want string
	}{
		{Operation{Client: 3, Kind: KindCommit, Execution: "e1", Input: Input{Expected: 4, Data: "c3-17#0badf00d"}, Output: Output{Outcome: OutcomeOK}},
			"c3 commit(e1, v4→5, w=c3-17) → ok"},
		{Operation{Client: 3, Kind: KindCommit, Execution: "e1", Input: Input{Expected: 4, Data: "c3-17#0badf00d"}, Output: Output{Outcome: OutcomeConflict, Found: &found}},
			"c3 commit(e1, v4→5, w=c3-17) → conflict(found v6)"},
		{Operation{Client: 1, Kind: KindLoad, Execution: "e1", Output: Output{Outcome: OutcomeOK, Exists: true, Version: 5, Data: "c3-17#0badf00d"}},
			"c1 load(e1) → v5 c3-17"},
		{Operation{Client: 1, Kind: KindSave, Execution: "e2", Output: Output{Outcome: OutcomeIndeterminate}},
			"c1 save(e2, v0→1, w=) → ? (indeterminate)"},
		{Operation{Client: 2, Kind: KindReadTrace, Execution: "e1", Output: Output{Outcome: OutcomeOK, Trace: []TraceItem{
			{Index: 7, Entry: "a#1"}, {Index: 8, Entry: "b#2"}, {Index: 9, Entry: "c#3"}, {Index: 10, Entry: "d#4"}, {Index: 11, Entry: "e#5"}}}},
			"c2 read_trace(e1) → [7..11] a b … d e"},
	}
	for _, tt := range tests {
		if got := describeOperation(&tt.op); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
