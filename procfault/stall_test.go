package procfault

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/linearizability"
)

// A worker stopped while it holds the write lock makes the others' writes
// fail with busy errors (recorded as failed or indeterminate), and the
// merged history of every process still checks.
func TestWriterStallEmbedded(t *testing.T) {
	for _, scheme := range []string{"sqlite:", "libsql:"} {
		t.Run(strings.TrimSuffix(scheme, ":"), func(t *testing.T) {
			out := t.TempDir()
			url := scheme + filepath.Join(t.TempDir(), "s.db")
			res, err := WriterStall(context.Background(), StallOptions{URL: url, Seed: 1, Command: selfCommand(t), OutDir: out})
			if errors.Is(err, ErrNotRun) && strings.Contains(err.Error(), "without cgo") {
				t.Skip(err)
			}
			if errors.Is(err, ErrNotRun) && res != nil && res.ClockStep.Abs() > maxClockStep {
				// The machine's wall clock was stepped during the run: the
				// run refused to judge a history it could not merge, which
				// is what it must do, and this test learnt nothing.
				t.Skipf("NOT RUN: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil {
				t.Fatalf("%v (history in %s)", res.Err, out)
			}
			if res.Report.Verdict != linearizability.Ok {
				t.Fatalf("verdict %s: %v", res.Report.Verdict, res.Report.Notes)
			}
			if res.Window < DefaultWindow || res.Busy == 0 {
				t.Errorf("want a stall of at least %v that the others saw as busy errors; got %v and %d", DefaultWindow, res.Window, res.Busy)
			}
			if len(res.Artifacts) == 0 {
				t.Errorf("no history kept")
			}
			t.Logf("%s worker %d stopped at its commit %d for %v; %d operations of the others failed meanwhile; %d operations in all; clock step %v",
				scheme, res.Stalled, res.StallAt, res.Window, res.Busy, len(res.History.Ops), res.ClockStep)
		})
	}
}

func TestWriterStallRefusesWhatItCannotStall(t *testing.T) {
	for _, url := range []string{"memory:", "sqlite::memory:", "mutant:split-commit?path=/tmp/x.db"} {
		if bt, err := backends.Resolve(url); err != nil || !lacks(bt, StallNeeds()) {
			t.Errorf("%s: writer-stall applies (%v)", url, err)
		}
		if _, err := WriterStall(context.Background(), StallOptions{URL: url}); !errors.Is(err, ErrNotRun) {
			t.Errorf("%s: want ErrNotRun, got %v", url, err)
		}
	}
}

// mergeHistories gives each process its own client ids and orders the
// operations by return (an indeterminate one by when its error came back).
func TestMergeHistories(t *testing.T) {
	op := func(client int, call, ret int64, out linearizability.Outcome) linearizability.Operation {
		o := linearizability.Operation{Client: client, Kind: linearizability.KindAppendTrace, Execution: "e0", Call: call, Return: ret, Output: linearizability.Output{Outcome: out}}
		if out == linearizability.OutcomeIndeterminate {
			o.Return, o.Output.Observed = linearizability.EndOfHistory, ret
		}
		return o
	}
	a := []linearizability.Operation{op(0, 1, 5, linearizability.OutcomeOK), op(0, 6, 9, linearizability.OutcomeIndeterminate)}
	b := []linearizability.Operation{op(0, 2, 3, linearizability.OutcomeOK), op(1, 4, 7, linearizability.OutcomeFailed)}
	h, source := mergeHistories(linearizability.DefaultMeta(), [][]linearizability.Operation{a, b})
	var got []string
	for i, o := range h.Ops {
		got = append(got, strings.Join([]string{string(rune('a' + source[i])), string(rune('0' + o.Client))}, ""))
	}
	if want := "b1 a0 b2 a0"; strings.Join(got, " ") != want {
		t.Fatalf("merged order (process, client): want %s, got %s", want, strings.Join(got, " "))
	}
	if err := linearizability.Validate(h); err != nil {
		t.Fatal(err)
	}
}

// A stall worker's history comes as the body of its history message, in
// the history file's lines; the parent reads back what was written, and a
// body that does not hold the count the line says is the worker's error.
func TestHistoryBody(t *testing.T) {
	ops := []linearizability.Operation{
		{Client: 1, Kind: linearizability.KindLoad, Execution: "e1", Call: 5, Return: 9, Output: linearizability.Output{Outcome: linearizability.OutcomeOK}},
		{Client: 2, Kind: linearizability.KindAppendTrace, Execution: "e2", Call: 6, Return: linearizability.EndOfHistory,
			Output: linearizability.Output{Outcome: linearizability.OutcomeIndeterminate, Observed: 8}},
	}
	var body bytes.Buffer
	if err := linearizability.WriteJSONL(&body, linearizability.History{Meta: linearizability.DefaultMeta(), Ops: ops}); err != nil {
		t.Fatal(err)
	}
	m := readHistory(message{Type: msgHistory, Steps: 3, Count: len(ops)}, body.Bytes())
	if m.Type != msgHistory || m.Steps != 3 || !reflect.DeepEqual(m.Ops, ops) {
		t.Fatalf("read back %s, %d steps, ops %+v; want the %d written", m.Type, m.Steps, m.Ops, len(ops))
	}
	for name, c := range map[string]struct {
		count int
		body  []byte
	}{
		"fewer than said": {3, body.Bytes()},
		"cut":             {2, body.Bytes()[:body.Len()-20]},
	} {
		m := readHistory(message{Type: msgHistory, Count: c.count}, c.body)
		if m.Type != msgError || m.Stage != "history" || m.Ops != nil {
			t.Errorf("%s: got a %s message at stage %q with %d ops; want an error at stage history", name, m.Type, m.Stage, len(m.Ops))
		}
	}
}
