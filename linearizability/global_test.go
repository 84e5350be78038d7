package linearizability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/storecheck/storecheck/model"
)

// baseHistory records a small legal run through the reference model: a
// winner t1, a loser t2 from the same version, a relay that reads and acks,
// a sweep that reads a timer, t3 re-arming it, the sweep's stale delete, and
// the heal reads.
func baseHistory(t *testing.T) History {
	t.Helper()
	ctx := context.Background()
	rec := NewRecorder(model.NewReference(model.DefaultConfig()))
	c1, c2 := rec.Client(), rec.Client()
	batch := func(tok string, fireAt float64, path string) model.Batch {
		return model.Batch{
			Emits:            []model.Emit{{Event: model.Event{ID: tok + "/e0", Name: "n"}}, {Event: model.Event{ID: tok + "/e1", Name: "n"}}},
			ProcessedEventID: model.Ptr(tok + "/p"),
			Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: path, FireAt: fireAt}},
			Spawns:           []model.Spawn{{ChildID: tok + "/s0", RootPath: "r"}},
			Trace:            json.RawMessage(`{"token":"` + tok + `"}`),
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c1.Commit(ctx, witnessed("e1", "t1", "", 0), batch("t1", 1, "a")))
	if err := c2.Commit(ctx, witnessed("e1", "t2", "", 0), batch("t2", 2, "b")); err == nil {
		t.Fatal("t2 should conflict")
	}
	_, err := c1.PendingOutbox(ctx)
	must(err)
	must(c1.AckOutbox(ctx, 2)) // t1/e1
	_, err = c1.DueTimers(ctx, 1.5)
	must(err)
	b3 := batch("t3", 3, "a")
	b3.Emits = b3.Emits[:1]
	must(c2.Commit(ctx, witnessed("e1", "t3", "t1", 1), b3))
	must(c1.DeleteTimer(ctx, "e1", "a", 1)) // stale: a was re-armed at 3
	must(Heal(ctx, rec.HealClient(), rec.History()))
	return rec.History()
}

// healOp returns the heal operation of a kind (and event id, for
// is_processed) in h, whose outputs the caller may change: h.Ops must be a
// copy, and the output slices are copied here.
func healOp(t *testing.T, h *History, kind Kind, event string) *Operation {
	t.Helper()
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Heal && op.Kind == kind && (event == "" || op.Input.EventID == event) {
			op.Output.Outbox = slices.Clone(op.Output.Outbox)
			op.Output.Spawns = slices.Clone(op.Output.Spawns)
			op.Output.Timers = slices.Clone(op.Output.Timers)
			op.Output.Trace = slices.Clone(op.Output.Trace)
			return op
		}
	}
	t.Fatalf("no heal %s %s", kind, event)
	return nil
}

// commitOp returns the commit with a token in h.
func commitOp(t *testing.T, h *History, token string) *Operation {
	t.Helper()
	for i := range h.Ops {
		if h.Ops[i].Kind == KindCommit && Token(h.Ops[i].Input.Data) == token {
			return &h.Ops[i]
		}
	}
	t.Fatalf("no commit %s", token)
	return nil
}

func TestGlobalChecksCatchMutations(t *testing.T) {
	base := baseHistory(t)
	if rep, err := Check(context.Background(), base, Options{}); err != nil || rep.Verdict != Ok || len(rep.Notes) > 0 {
		t.Fatalf("base history: %v %v %v", err, rep.Err, rep.Notes)
	}
	outbox := func(h *History) *Operation { return healOp(t, h, KindPendingOutbox, "") }
	checkMutations(t, base, []mutationCase{
		{"winner's emit missing", func(h *History) { o := outbox(h); o.Output.Outbox = o.Output.Outbox[:1] }, ErrAtomicity},
		{"emit vanished before its ack", func(h *History) { o := outbox(h); o.Output.Outbox = o.Output.Outbox[1:] }, ErrLostDelivery},
		{"emit pending twice", func(h *History) {
			o := outbox(h)
			o.Output.Outbox = append(o.Output.Outbox, OutboxItem{Seq: 99, EventID: "t1/e0"})
		}, ErrDuplicateDelivery},
		{"acked emit pending again", func(h *History) {
			o := outbox(h)
			o.Output.Outbox = append([]OutboxItem{o.Output.Outbox[0], {Seq: 2, EventID: "t1/e1"}}, o.Output.Outbox[1:]...)
		}, ErrDuplicateDelivery},
		{"emits out of version order", func(h *History) {
			o := outbox(h)
			o.Output.Outbox[0].Seq, o.Output.Outbox[1].Seq = o.Output.Outbox[1].Seq, o.Output.Outbox[0].Seq
			slices.Reverse(o.Output.Outbox)
		}, ErrDeliveryOrder},
		{"loser's emit leaked", func(h *History) {
			o := outbox(h)
			o.Output.Outbox = append(o.Output.Outbox, OutboxItem{Seq: 99, EventID: "t2/e0"})
		}, ErrAtomicity},
		{"emit nobody wrote", func(h *History) {
			o := outbox(h)
			o.Output.Outbox = append(o.Output.Outbox, OutboxItem{Seq: 99, EventID: "zz/e0"})
		}, ErrPhantom},
		{"loser's spawn leaked", func(h *History) {
			o := healOp(t, h, KindPendingSpawns, "")
			o.Output.Spawns = append(o.Output.Spawns, SpawnItem{Seq: 99, Parent: "e1", Child: "t2/s0"})
		}, ErrAtomicity},
		{"winner's dedupe marker lost", func(h *History) { healOp(t, h, KindIsProcessed, "t1/p").Output.Processed = false }, ErrEffectOnce},
		{"loser's dedupe marker leaked", func(h *History) { healOp(t, h, KindIsProcessed, "t2/p").Output.Processed = true }, ErrAtomicity},
		{"re-armed timer deleted by a stale sweep", func(h *History) {
			healOp(t, h, KindDueTimers, "").Output.Timers = nil
		}, ErrTimers},
		{"timer holds an overwritten fire_at", func(h *History) {
			healOp(t, h, KindDueTimers, "").Output.Timers[0].FireAt = 1
		}, ErrTimers},
		{"loser's timer leaked", func(h *History) {
			o := healOp(t, h, KindDueTimers, "")
			o.Output.Timers = append(o.Output.Timers, DueTimerItem{Execution: "e1", Path: "b", FireAt: 2})
		}, ErrAtomicity},
		{"loser's trace step leaked", func(h *History) {
			o := healOp(t, h, KindReadTrace, "")
			o.Output.Trace = []TraceItem{o.Output.Trace[0], {Index: 1, Entry: commitOp(t, h, "t2").Input.Trace}, {Index: 2, Entry: o.Output.Trace[1].Entry}}
		}, ErrAtomicity},
		{"winner's trace step missing", func(h *History) {
			o := healOp(t, h, KindReadTrace, "")
			o.Output.Trace = o.Output.Trace[:1]
		}, ErrAtomicity},
		{"ok commit lost", func(h *History) {
			c := commitOp(t, h, "t2")
			c.Output = Output{Outcome: OutcomeOK}
		}, ErrLostUpdate},
		{"conflict that won", func(h *History) {
			c := commitOp(t, h, "t3")
			c.Output = Output{Outcome: OutcomeConflict, Found: model.Ptr(int64(1))}
		}, ErrAtomicity},
		{"final row written by nobody", func(h *History) { healOp(t, h, KindLoad, "").Output.Data = "zz#00000000" }, ErrPhantom},
	})
}

func TestReusedWitnessIsMalformed(t *testing.T) {
	h := baseHistory(t)
	c := commitOp(t, &h, "t3") // h.Ops is this test's own
	c.Input.Data = commitOp(t, &h, "t1").Input.Data
	if _, err := Check(context.Background(), h, Options{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v, want ErrMalformed", err)
	}
}

// TestReusedWitnessFirstByOperation: the commits' witnesses and the trace
// entries are indexed by two passes at once; of two problems, the one
// reported is the one at the earlier operation, as one pass in history
// order would meet it (at one commit, a reused token before a reused trace
// entry), whichever pass found it.
func TestReusedWitnessFirstByOperation(t *testing.T) {
	reuse := func(h *History, what, from, to string) {
		src, dst := commitOp(t, h, from), commitOp(t, h, to)
		switch what {
		case "token":
			dst.Input.Data = src.Input.Data
		case "trace":
			dst.Input.Trace = src.Input.Trace
		case "no token":
			dst.Input.Data = "#" + Token(dst.Input.Data) // no token before its hash
		}
	}
	for _, c := range []struct {
		name       string
		t2, t3     string // what t2 (the second commit) and t3 (the third) get wrong
		want, note string
	}{
		{"token at t2, trace at t3", "token", "trace", "witness token", ""},
		{"trace at t2, token at t3", "trace", "token", "witness trace entry", ""},
		{"trace at t2, no token at t3", "trace", "no token", "witness trace entry", ""},
		{"no token at t2, trace at t3", "no token", "trace", "", "carries no witness token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := baseHistory(t)
			reuse(&h, c.t2, "t1", "t2")
			reuse(&h, c.t3, "t1", "t3")
			rep, err := Check(context.Background(), h, Options{})
			switch {
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want the %s reused", err, c.want)
			case c.note != "" && (err != nil || !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, c.note) })):
				t.Fatalf("got %v (report %+v), want the note %q", err, rep, c.note)
			}
		})
	}
	h := baseHistory(t) // one commit reusing both: its token is met first
	reuse(&h, "trace", "t1", "t3")
	reuse(&h, "token", "t1", "t3")
	if _, err := Check(context.Background(), h, Options{}); err == nil || !strings.Contains(err.Error(), "witness token") {
		t.Fatalf("got %v, want the reused token", err)
	}
	// Without heal reads the global checks are skipped, a reused witness
	// unlooked at: a note, not an error (the passes run all the same).
	h.Ops = slices.DeleteFunc(h.Ops, func(op Operation) bool { return op.Heal })
	rep, err := Check(context.Background(), h, Options{})
	if err != nil || !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "no heal reads") }) {
		t.Fatalf("without heal reads: got %v (report %+v), want the note that the global checks were skipped", err, rep)
	}
}

// A load_for_event answer that shows part of a commit — its row without its
// dedupe marker, or its marker with an older row — breaks atomicity; the
// whole commit, or none of it, is fine.
func TestAtomicVisibility(t *testing.T) {
	base := baseHistory(t)
	t3 := commitOp(t, &base, "t3")
	t1 := commitOp(t, &base, "t1")
	probe := func(version int64, data string, processed bool) History {
		h := History{Meta: base.Meta, Ops: slices.Clone(base.Ops)}
		h.Ops = append(h.Ops, Operation{
			Client: 9, Kind: KindLoadForEvent, Execution: "e1", Input: Input{EventID: "t3/p"},
			Output: Output{Outcome: OutcomeOK, Exists: true, Version: version, Data: data, Processed: processed},
			Call:   t3.Call, Return: t3.Return,
		})
		return h
	}
	for _, c := range []struct {
		name string
		h    History
		want bool
	}{
		{"whole commit", probe(2, t3.Input.Data, true), false},
		{"none of it", probe(1, t1.Input.Data, false), false},
		{"row without its marker", probe(2, t3.Input.Data, false), true},
		{"marker without its row", probe(1, t1.Input.Data, true), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Check(context.Background(), c.h, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := errors.Is(rep.Err, ErrAtomicity) && strings.Contains(fmt.Sprint(rep.Err), "part of a commit")
			if got != c.want {
				t.Fatalf("atomicity violation %v, want %v: %v", got, c.want, rep.Err)
			}
		})
	}
}

// TestLaterFindingsMergeInOrder: the rows checks run beside porcupine into
// a report of their own; merged, their findings come after porcupine's, in
// their order, within the report's cap, with their notes and replica stats.
func TestLaterFindingsMergeInOrder(t *testing.T) {
	rep := &Report{Notes: []string{"porcupine"}}
	rep.add(ErrLinearizability, "e1", "first")
	rows := &Report{Notes: []string{"rows"}, Replica: &ReplicaStats{}}
	for i := range maxViolations {
		rows.add(ErrTimers, "e2", "row %d", i)
	}
	rep.merge(rows)
	if len(rep.Violations) != maxViolations {
		t.Fatalf("%d violations after the merge, want the cap %d", len(rep.Violations), maxViolations)
	}
	if rep.Violations[0].Msg != "first" || rep.Violations[1].Msg != "row 0" || rep.Violations[maxViolations-1].Msg != fmt.Sprintf("row %d", maxViolations-2) {
		t.Errorf("order after the merge: %q, %q, …, %q", rep.Violations[0].Msg, rep.Violations[1].Msg, rep.Violations[maxViolations-1].Msg)
	}
	if strings.Join(rep.Notes, ",") != "porcupine,rows" || rep.Replica != rows.Replica {
		t.Errorf("notes %q, replica stats carried: %v", rep.Notes, rep.Replica == rows.Replica)
	}
}

// TestCheckStopsWhenInterrupted: the checks of the tables and reads run
// beside porcupine and can take minutes on a long history; once ctx is
// done they stop, and Check says the check was cut short (an error
// wrapping ctx's) rather than returning a report that reads as a verdict.
func TestCheckStopsWhenInterrupted(t *testing.T) {
	h := simulate(t, simConfig{ops: 2000, clients: 6, execs: 4, traceMax: model.DefaultTraceMax, seed: 5})
	if rep, err := Check(context.Background(), h, Options{}); err != nil || rep.Verdict != Ok {
		t.Fatalf("the legal history: %v, %v", rep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Check(ctx, h, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Check of an interrupted context: report %+v, error %v; want an error wrapping context.Canceled", rep, err)
	}
}

// A partition whose search is still going when the check is interrupted
// is given up at once (Unknown), not waited for: porcupine's search takes
// only a timeout.
func TestDecideGivesUpOnInterrupt(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	got := decide(ctx, func() porcupine.CheckResult { <-release; return porcupine.Ok })
	if got != porcupine.Unknown || time.Since(start) > 5*time.Second {
		t.Errorf("decide of a search that never ends, interrupted: %v after %v; want Unknown at once", got, time.Since(start))
	}
	if got := decide(context.Background(), func() porcupine.CheckResult { return porcupine.Illegal }); got != porcupine.Illegal {
		t.Errorf("decide of a finished search: %v, want its result", got)
	}
}
