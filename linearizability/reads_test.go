package linearizability

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewedHistories re-checks histories crafted by a review of the
// queue and timer checks (testdata/xf*, xp*, nf*, qp*): each names the
// verdict it must get, and the guarantee a FAIL must name.
func TestReviewedHistories(t *testing.T) {
	for _, c := range []struct {
		file string
		want error // nil: PASS
	}{
		// due_timers(now) lists a timer with fire_at > now.
		{"xf1_due_not_due.jsonl", ErrTimers},
		// due_timers lists fire_at 100 before 50: not soonest first.
		{"xf2_due_out_of_order.jsonl", ErrDeliveryOrder},
		// A timer scheduled (ok) before due_timers(1000) was called, due,
		// never cancelled or deleted, is missing from it and present at
		// the end.
		{"xf3_due_misses_timer.jsonl", ErrStaleRead},
		// A timer cancelled by a commit acknowledged before the read was
		// called is listed, and gone at the end.
		{"xf6_due_lists_cancelled.jsonl", ErrStaleRead},
		// A timer delete_timer'd (ok) after its commit returned is listed
		// by a read called after the delete returned.
		{"xf9_deleted_timer_relisted.jsonl", ErrStaleRead},
		// A stale sweep of a re-armed timer deletes nothing.
		{"xp4_stale_sweep_noop.jsonl", nil},
		// A delete that returned before the timer's commit was called is
		// a no-op: the timer stays.
		{"xp8_delete_before_schedule.jsonl", nil},
		// An ack that returned before the entry's commit was called is a
		// no-op: the entry stays pending.
		{"qp4_ack_absent_seq_first.jsonl", nil},
		// Without any heal read, or without the heal read of the outbox,
		// the reads are still checked on their own and against each other.
		{"nf1_noheal_acked_relisted.jsonl", ErrDuplicateDelivery},
		{"nf2_heal_without_outbox_acked_relisted.jsonl", ErrDuplicateDelivery},
		{"nf3_noheal_listed_twice.jsonl", ErrDuplicateDelivery},
		{"nf4_noheal_phantom_entry.jsonl", ErrPhantom},
	} {
		t.Run(c.file, func(t *testing.T) {
			rep, err := CheckFile(context.Background(), filepath.Join("testdata", c.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == nil && rep.Verdict != Ok:
				t.Fatalf("verdict %s, want Ok: %v", rep.Verdict, rep.Err)
			case c.want != nil && (rep.Verdict != Illegal || !errors.Is(rep.Err, c.want)):
				t.Fatalf("verdict %s, want Illegal naming %q: %v", rep.Verdict, c.want, rep.Err)
			}
			t.Log(rep.Err)
		})
	}
}

// timerHistory builds hand-made histories of one execution, e1, with
// heal reads that show its final row and timers.
type timerHistory struct {
	ops    []Operation
	client int
}

func (b *timerHistory) add(op Operation) *timerHistory {
	if op.Client == 0 {
		b.client++
		op.Client = b.client // every operation a client of its own: no overlap to refuse
	}
	b.ops = append(b.ops, op)
	return b
}

// commit adds a commit of token tok from version exp (prev the token
// there).
func (b *timerHistory) commit(tok string, exp int64, prev string, call, ret int64, outcome Outcome, timers ...TimerRef) *timerHistory {
	if outcome == OutcomeIndeterminate {
		ret = EndOfHistory
	}
	return b.add(Operation{Kind: KindCommit, Execution: "e1", Input: Input{Data: tok + "#0000abcd", Expected: exp, Prev: prev, Timers: timers},
		Output: Output{Outcome: outcome}, Call: call, Return: ret})
}

func (b *timerHistory) due(now float64, call, ret int64, timers ...DueTimerItem) *timerHistory {
	return b.add(Operation{Kind: KindDueTimers, Input: Input{Now: now}, Output: Output{Outcome: OutcomeOK, Timers: timers}, Call: call, Return: ret})
}

func (b *timerHistory) del(path string, fireAt float64, call, ret int64, outcome Outcome) *timerHistory {
	if outcome == OutcomeIndeterminate {
		ret = EndOfHistory
	}
	return b.add(Operation{Kind: KindDeleteTimer, Execution: "e1", Input: Input{Path: path, FireAt: fireAt}, Output: Output{Outcome: outcome}, Call: call, Return: ret})
}

// heal adds the heal reads: e1 at version v holding tok, and the timers.
func (b *timerHistory) heal(v int64, tok string, timers ...DueTimerItem) History {
	at := int64(1_000_000)
	heal := func(op Operation) {
		op.Client, op.Heal, op.Call, op.Return = 999, true, at, at+1
		at += 10
		b.ops = append(b.ops, op)
	}
	heal(Operation{Kind: KindLoad, Execution: "e1", Output: Output{Outcome: OutcomeOK, Exists: v > 0, Version: v, Data: tok + "#0000abcd"}})
	heal(Operation{Kind: KindReadTrace, Execution: "e1", Output: Output{Outcome: OutcomeOK}})
	heal(Operation{Kind: KindPendingOutbox, Output: Output{Outcome: OutcomeOK}})
	heal(Operation{Kind: KindPendingSpawns, Output: Output{Outcome: OutcomeOK}})
	heal(Operation{Kind: KindDueTimers, Input: Input{Now: math.MaxFloat64}, Output: Output{Outcome: OutcomeOK, Timers: timers}})
	return History{Meta: DefaultMeta(), Ops: b.ops}
}

func sched(path string, fireAt float64) TimerRef {
	return TimerRef{Action: "schedule", Path: path, FireAt: fireAt}
}

func cancelT(path string) TimerRef { return TimerRef{Action: "cancel", Path: path} }

func timer(path string, fireAt float64) DueTimerItem {
	return DueTimerItem{Execution: "e1", Path: path, FireAt: fireAt}
}

// TestDueTimersRealTime: due_timers reads are held to now, to their order
// and to real time as the queue reads are, with no alarm where an
// overlapping or indeterminate operation may explain what a read shows.
func TestDueTimersRealTime(t *testing.T) {
	ok, indet, failed := OutcomeOK, OutcomeIndeterminate, OutcomeFailed
	for _, c := range []struct {
		name string
		h    History
		want error // nil: Ok
	}{
		// Listing what is due, in order.
		{"ties in any order", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100), sched("t1", 100), sched("t2", 50)).
			due(1000, 30, 40, timer("t2", 50), timer("t1", 100), timer("t0", 100)).
			heal(1, "a", timer("t2", 50), timer("t0", 100), timer("t1", 100)), nil},
		{"due exactly now", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			due(100, 30, 40, timer("t0", 100)).heal(1, "a", timer("t0", 100)), nil},
		{"not due yet", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			due(99.5, 30, 40, timer("t0", 100)).heal(1, "a", timer("t0", 100)), ErrTimers},
		{"not soonest first", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100), sched("t1", 50)).
			due(1000, 30, 40, timer("t0", 100), timer("t1", 50)).heal(1, "a", timer("t1", 50), timer("t0", 100)), ErrDeliveryOrder},

		// Must be listed.
		{"missed, still there after", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			due(1000, 30, 40).heal(1, "a", timer("t0", 100)), ErrStaleRead},
		{"missed, then deleted", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			due(1000, 30, 40).del("t0", 100, 50, 60, ok).heal(1, "a"), ErrTimers},
		{"missed while not due", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			due(99, 30, 40).heal(1, "a", timer("t0", 100)), nil},
		{"read overlaps the schedule", (&timerHistory{}).commit("a", 0, "", 10, 35, ok, sched("t0", 100)).
			due(1000, 30, 40).heal(1, "a", timer("t0", 100)), nil},
		{"indeterminate schedule", (&timerHistory{}).commit("a", 0, "", 10, 0, indet, sched("t0", 100)).
			due(1000, 30, 40).heal(1, "a", timer("t0", 100)), nil},
		{"overridden in its own batch", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100), sched("t0", 101)).
			due(1000, 30, 40, timer("t0", 101)).heal(1, "a", timer("t0", 101)), nil},
		// A schedule replaced within its own batch was never stored: no
		// read may list it (found by the checker review; both passed).
		{"listed though cancelled in its own batch", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100), cancelT("t0")).
			due(1000, 30, 40, timer("t0", 100)).commit("b", 1, "a", 50, 60, ok, sched("t0", 200)).heal(2, "b", timer("t0", 200)), ErrTimers},
		{"listed though re-armed in its own batch", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100), sched("t0", 150)).
			due(120, 30, 40, timer("t0", 100)).commit("b", 1, "a", 50, 60, ok, cancelT("t0")).heal(2, "b"), ErrTimers},
		{"read overlaps the cancel", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			commit("b", 1, "a", 30, 50, ok, cancelT("t0")).due(1000, 40, 60).heal(2, "b"), nil},
		{"read overlaps a delete", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 50, ok).due(1000, 40, 60).heal(1, "a"), nil},
		{"indeterminate delete called before", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 0, indet).due(1000, 40, 60).heal(1, "a"), nil},
		{"failed delete called before", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 35, failed).due(1000, 40, 60).heal(1, "a", timer("t0", 100)), ErrStaleRead},
		{"delete returned before the schedule was called", (&timerHistory{}).del("t0", 100, 1, 5, ok).
			commit("a", 0, "", 10, 20, ok, sched("t0", 100)).due(1000, 30, 40).heal(1, "a", timer("t0", 100)), ErrStaleRead},

		// Must not be listed.
		{"listed after its cancel returned", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			commit("b", 1, "a", 30, 40, ok, cancelT("t0")).due(1000, 50, 60, timer("t0", 100)).heal(2, "b"), ErrStaleRead},
		{"listed after its re-arm returned", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			commit("b", 1, "a", 30, 40, ok, sched("t0", 200)).due(1000, 50, 60, timer("t0", 100)).heal(2, "b", timer("t0", 200)), ErrStaleRead},
		{"listed after an indeterminate cancel", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			commit("b", 1, "a", 30, 0, indet, cancelT("t0")).due(1000, 50, 60, timer("t0", 100)).heal(2, "b"), nil},
		{"listed after its delete returned", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 40, ok).due(1000, 50, 60, timer("t0", 100)).heal(1, "a"), ErrStaleRead},
		{"listed again at the end after its delete", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 40, ok).due(1000, 50, 60, timer("t0", 100)).heal(1, "a", timer("t0", 100)), ErrTimers},
		{"delete overlapped the schedule", (&timerHistory{}).commit("a", 0, "", 10, 35, ok, sched("t0", 100)).
			del("t0", 100, 30, 40, ok).due(1000, 50, 60, timer("t0", 100)).heal(1, "a", timer("t0", 100)), nil},
		{"delete before an indeterminate schedule", (&timerHistory{}).commit("a", 0, "", 10, 0, indet, sched("t0", 100)).
			due(1000, 20, 25, timer("t0", 100)).del("t0", 100, 30, 40, ok).due(1000, 50, 60, timer("t0", 100)).
			heal(1, "a", timer("t0", 100)), nil},
		{"indeterminate delete", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 0, indet).due(1000, 50, 60, timer("t0", 100)).heal(1, "a", timer("t0", 100)), nil},
		{"read overlaps its delete", (&timerHistory{}).commit("a", 0, "", 10, 20, ok, sched("t0", 100)).
			del("t0", 100, 30, 55, ok).due(1000, 50, 60, timer("t0", 100)).heal(1, "a"), nil},
	} {
		t.Run(c.name, func(t *testing.T) { wantVerdict(t, c.h, c.want) })
	}
}

// TestDueTimersWithoutHeal: with no heal reads at all, what the timer
// reads show on their own is still checked.
func TestDueTimersWithoutHeal(t *testing.T) {
	b := (&timerHistory{}).commit("a", 0, "", 10, 20, OutcomeOK, sched("t0", 100))
	b.due(5, 30, 40, timer("t0", 100))
	rep, err := Check(context.Background(), History{Meta: DefaultMeta(), Ops: b.ops}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rep.Err, ErrTimers) || !strings.Contains(rep.Err.Error(), "not due") {
		t.Fatalf("got %v, want the timer not due", rep.Err)
	}
}

// TestAckActsOnExistingEntriesOnly: an ack removes an entry only if the
// entry existed when the ack took effect. One that overlaps the entry's
// commit may have come first, as a no-op, and the entry may be listed
// after it; one called after the commit returned (or after a read listed
// the entry) removed it.
func TestAckActsOnExistingEntriesOnly(t *testing.T) {
	entry := OutboxItem{Seq: 1, EventID: "a/e0"}
	history := func(commitRet, ackCall, ackRet int64, healLists bool) History {
		b := &timerHistory{}
		b.add(Operation{Kind: KindCommit, Execution: "e1", Input: Input{Data: "a#0000abcd", Emits: []EmitRef{{EventID: "a/e0"}}},
			Output: Output{Outcome: OutcomeOK}, Call: 10, Return: commitRet})
		b.add(Operation{Kind: KindAckOutbox, Input: Input{Seq: 1}, Output: Output{Outcome: OutcomeOK}, Call: ackCall, Return: ackRet})
		b.add(Operation{Kind: KindPendingOutbox, Output: Output{Outcome: OutcomeOK, Outbox: []OutboxItem{entry}}, Call: 100, Return: 110})
		h := b.heal(1, "a")
		if healLists {
			healOp(t, &h, KindPendingOutbox, "").Output.Outbox = []OutboxItem{entry}
		}
		return h
	}
	for _, c := range []struct {
		name string
		h    History
		want error
	}{
		{"ack overlaps the commit", history(30, 20, 25, true), nil},
		{"ack before the commit", history(30, 1, 5, true), nil},
		{"ack after the commit returned", history(30, 40, 50, true), ErrDuplicateDelivery},
		{"ack after the commit returned, gone at the end", history(30, 40, 50, false), ErrStaleRead},
	} {
		t.Run(c.name, func(t *testing.T) { wantVerdict(t, c.h, c.want) })
	}
}

// TestEmptyTargetIsQuoted: an emit's target is quoted in messages, so that
// an empty target is seen.
func TestEmptyTargetIsQuoted(t *testing.T) {
	rep, err := CheckFile(context.Background(), filepath.Join("testdata", "qf6b_empty_vs_null_target.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rep.Err, ErrPhantom) || !strings.Contains(rep.Err.Error(), `has no target but commit a (e1 v0→1) wrote it with target ""`) {
		t.Fatalf("got %v", rep.Err)
	}
}

// wantVerdict checks h: Ok when want is nil, else Illegal naming want.
func wantVerdict(t *testing.T, h History, want error) {
	t.Helper()
	rep, err := Check(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case want == nil && rep.Verdict != Ok:
		t.Fatalf("verdict %s, want Ok: %v", rep.Verdict, rep.Err)
	case want != nil && (rep.Verdict != Illegal || !errors.Is(rep.Err, want)):
		t.Fatalf("verdict %s, want Illegal naming %q: %v", rep.Verdict, want, rep.Err)
	}
	t.Log(rep.Err)
}

// TestIndeterminateWithAStoredReturn: an indeterminate operation returns at
// EndOfHistory whatever its return_ns says (a history written by hand or by
// another tool may store when its error came back). An ack or delete_timer
// called before the entry or timer existed may still take effect after it:
// the final tables may lack it. Both histories failed before (found by the
// checker review).
func TestIndeterminateWithAStoredReturn(t *testing.T) {
	t.Run("ack", func(t *testing.T) {
		h := History{Meta: DefaultMeta(), Ops: []Operation{
			{Client: 1, Kind: KindAckOutbox, Input: Input{Seq: 1}, Output: Output{Outcome: OutcomeIndeterminate, Error: "timeout"}, Call: 5, Return: 6},
			{Client: 2, Kind: KindCommit, Execution: "e1", Input: Input{Data: "a#0000abcd", Emits: []EmitRef{{EventID: "a/e0"}}}, Output: Output{Outcome: OutcomeOK}, Call: 10, Return: 20},
		}}
		h.Ops = append(h.Ops, (&timerHistory{}).heal(1, "a").Ops...)
		wantVerdict(t, h, nil)
	})
	t.Run("delete_timer", func(t *testing.T) {
		h := (&timerHistory{}).del("t0", 100, 2, 0, OutcomeIndeterminate).commit("a", 0, "", 10, 20, OutcomeOK, sched("t0", 100)).heal(1, "a")
		h.Ops[0].Return = 4
		wantVerdict(t, h, nil)
	})
}

// TestRemovalCalledAsTheReadReturns: a removal called at the very time a
// read returned overlaps the read, as porcupine orders calls before
// returns of the same time; the read may miss the row. Both histories
// failed before (found by the checker review).
func TestRemovalCalledAsTheReadReturns(t *testing.T) {
	t.Run("ack", func(t *testing.T) {
		h := History{Meta: DefaultMeta(), Ops: []Operation{
			{Client: 1, Kind: KindCommit, Execution: "e1", Input: Input{Data: "a#0000abcd", Emits: []EmitRef{{EventID: "a/e0"}}}, Output: Output{Outcome: OutcomeOK}, Call: 10, Return: 20},
			{Client: 2, Kind: KindPendingOutbox, Output: Output{Outcome: OutcomeOK}, Call: 30, Return: 40},
			{Client: 3, Kind: KindAckOutbox, Input: Input{Seq: 1}, Output: Output{Outcome: OutcomeOK}, Call: 40, Return: 45},
		}}
		h.Ops = append(h.Ops, (&timerHistory{}).heal(1, "a").Ops...)
		wantVerdict(t, h, nil)
	})
	t.Run("delete_timer", func(t *testing.T) {
		wantVerdict(t, (&timerHistory{}).commit("a", 0, "", 10, 20, OutcomeOK, sched("t0", 5)).
			due(10, 30, 40).del("t0", 5, 40, 45, OutcomeOK).heal(1, "a"), nil)
	})
}
