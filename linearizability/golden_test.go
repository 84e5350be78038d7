package linearizability

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenHistories re-checks hand-written histories offline, as a saved
// run would be.
func TestGoldenHistories(t *testing.T) {
	tests := []struct {
		file    string
		verdict Verdict
		broken  []error
	}{
		{"lost_update.jsonl", Illegal, []error{ErrLinearizability, ErrLostUpdate}},
		{"stale_read.jsonl", Illegal, []error{ErrLinearizability}},
		{"leaked_emit.jsonl", Illegal, []error{ErrAtomicity}},
		{"indeterminate_ok.jsonl", Ok, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rep, err := CheckFile(context.Background(), filepath.Join("testdata", tt.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tt.verdict {
				t.Fatalf("verdict %s, want %s: %v", rep.Verdict, tt.verdict, rep.Err)
			}
			for _, g := range tt.broken {
				if !errors.Is(rep.Err, g) {
					t.Errorf("report does not name %q: %v", g, rep.Err)
				}
			}
			if tt.verdict == Ok && rep.Err != nil {
				t.Errorf("ok history reports %v", rep.Err)
			}
			t.Logf("%s: %v; notes %v", rep.Verdict, rep.Err, rep.Notes)
		})
	}
}

// TestGoldenWithoutHeal checks the legal indeterminate history with its heal
// reads removed: no witness resolution, so the indeterminate commits stay at
// the end of history and porcupine alone must accept them.
func TestGoldenWithoutHeal(t *testing.T) {
	h, err := LoadFile(filepath.Join("testdata", "indeterminate_ok.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ops []Operation
	for _, op := range h.Ops {
		if !op.Heal {
			ops = append(ops, op)
		}
	}
	h.Ops = ops
	rep, err := Check(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Ok {
		t.Fatalf("verdict %s: %v", rep.Verdict, rep.Err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "no heal reads") {
		t.Errorf("notes do not say the global checks were skipped: %v", rep.Notes)
	}
}

func TestMalformedHistoryNamesLine(t *testing.T) {
	_, err := LoadFile(filepath.Join("testdata", "malformed.jsonl"))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("got %v, want an ErrMalformed naming line 3", err)
	}
	for _, bad := range []string{
		`{"client":0,"kind":"load","execution":"e1","output":{"outcome":"ok"},"call_ns":10,"return_ns":5}`,
		`{"client":0,"kind":"load","execution":"e1","output":{"outcome":"indeterminate"},"call_ns":10,"return_ns":20}`,
		`{"client":0,"kind":"load","execution":"e1","output":{"outcome":"ok"},"call_ns":10,"return_ns":20,"extra":1}`,
		`{"client":0,"kind":"load","output":{"outcome":"ok"},"call_ns":10,"return_ns":20}`,
		`{"client":0,"kind":"load"`,
	} {
		_, err := ReadJSONL(strings.NewReader("\n" + bad + "\n"))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%s: got %v, want an ErrMalformed naming line 2", bad, err)
		}
	}
}

// TestOverlappingClientIsMalformed: a client's operations may be listed in
// any order, and two of them that overlap make the history malformed,
// whether they are listed in the order they were called or not (a history
// written by hand); listed out of order without overlapping, they are fine.
func TestOverlappingClientIsMalformed(t *testing.T) {
	load := func(client int, call, ret int64) Operation {
		return Operation{Client: client, Kind: KindLoad, Execution: "e1", Output: Output{Outcome: OutcomeOK}, Call: call, Return: ret}
	}
	appendTrace := func(client int, call int64) Operation { // indeterminate: it never returns
		return Operation{Client: client, Kind: KindAppendTrace, Execution: "e1", Input: Input{Trace: "x"}, Output: Output{Outcome: OutcomeIndeterminate}, Call: call, Return: call + 1}
	}
	for _, c := range []struct {
		name string
		ops  []Operation
		bad  bool
	}{
		{"overlap, in call order", []Operation{load(0, 10, 30), load(1, 11, 12), load(0, 20, 40)}, true},
		{"overlap, out of call order", []Operation{load(0, 20, 40), load(1, 11, 12), load(0, 10, 30)}, true},
		{"after an indeterminate write", []Operation{appendTrace(0, 5), load(0, 20, 40)}, true},
		{"sequential, in call order", []Operation{load(0, 10, 19), load(1, 11, 12), load(0, 20, 40)}, false},
		{"sequential, out of call order", []Operation{load(0, 20, 40), load(1, 11, 12), load(0, 10, 19)}, false},
	} {
		err := Validate(History{Meta: DefaultMeta(), Ops: c.ops})
		if got := errors.Is(err, ErrMalformed); got != c.bad {
			t.Errorf("%s: got %v, want malformed %v", c.name, err, c.bad)
		}
	}
}

// TestJSONLRoundTrip saves a simulated history and reads it back unchanged.
func TestJSONLRoundTrip(t *testing.T) {
	h := simulate(t, simConfig{ops: 300, clients: 4, execs: 2, traceMax: 3, seed: 9, indeterminate: 0.1})
	buf := jsonlOf(t, h)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteJSONL(&again, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("history changed in a JSON-lines round trip")
	}
	rep, err := CheckFile(context.Background(), path, Options{})
	if err != nil || rep.Verdict != Ok {
		t.Fatalf("offline re-check: %v %v", err, rep)
	}
}

// A register history with no linearization names the read that went back,
// what it returned, what had been acknowledged before it, and when.
func TestStaleReadIsNamedWithItsTime(t *testing.T) {
	rep, err := CheckFile(context.Background(), filepath.Join("testdata", "stale_read.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) == 0 {
		t.Fatal("no violation")
	}
	v := rep.Violations[0]
	if want := "stale read: c1 load called at 0.000s returned v1, but v2 was acknowledged"; !strings.Contains(v.Msg, want) {
		t.Errorf("violation %q does not say %q", v.Msg, want)
	}
	if v.AtNS != 50 {
		t.Errorf("AtNS %d, want the stale load's call (50)", v.AtNS)
	}
}
