package linearizability

import (
	"errors"
	"math"
	"testing"
)

// sideHistory is base() with side-writes: commit tN (vN) emits tN/e at seq
// N, processes event evN, arms timer e/p at fire_at N and appends trace
// step trN; the primary's heal reads list them all.
func sideHistory() *replicaHistory {
	h := base()
	for i, tok := range []string{"t1", "t2"} {
		in := &h.ops[i].Input
		in.EventID = "ev" + tok[1:]
		in.Emits = []EmitRef{{EventID: tok + "/e"}}
		in.Timers = []TimerRef{{Action: "schedule", Path: "p", FireAt: float64(i + 1)}}
		in.Trace = "tr" + tok[1:]
	}
	h.outbox("", true, 1002, 1003, 1, 2)
	h.timers("", true, math.MaxFloat64, 1004, 1005, 2)
	h.trace("", true, 1006, 1007, 1, 2)
	return h
}

// outbox records a pending_outbox through replica r listing the emits of
// the commits numbered vs (tN/e at seq N).
func (h *replicaHistory) outbox(r string, heal bool, call, ret int64, vs ...int) {
	h.client++
	out := Output{Outcome: OutcomeOK}
	for _, v := range vs {
		out.Outbox = append(out.Outbox, OutboxItem{Seq: int64(v), EventID: "t" + itoa(int64(v)) + "/e"})
	}
	h.ops = append(h.ops, Operation{Client: h.client, Kind: KindPendingOutbox, Replica: r, Heal: heal, Output: out, Call: call, Return: ret})
}

// timers records a due_timers(now) through replica r listing e/p at the
// fire_at of the commit numbered v (none when v is 0).
func (h *replicaHistory) timers(r string, heal bool, now float64, call, ret int64, v int) {
	h.client++
	out := Output{Outcome: OutcomeOK}
	if v > 0 {
		out.Timers = []DueTimerItem{{Execution: "e", Path: "p", FireAt: float64(v)}}
	}
	h.ops = append(h.ops, Operation{Client: h.client, Kind: KindDueTimers, Replica: r, Heal: heal, Input: Input{Now: now}, Output: out, Call: call, Return: ret})
}

// trace records a read_trace of "e" through replica r listing the steps of
// the commits numbered vs.
func (h *replicaHistory) trace(r string, heal bool, call, ret int64, vs ...int) {
	h.client++
	out := Output{Outcome: OutcomeOK}
	for i, v := range vs {
		out.Trace = append(out.Trace, TraceItem{Index: int64(i), Entry: "tr" + itoa(int64(v))})
	}
	h.ops = append(h.ops, Operation{Client: h.client, Kind: KindReadTrace, Execution: "e", Replica: r, Heal: heal, Output: out, Call: call, Return: ret})
}

// processed records an is_processed of evN through replica r.
func (h *replicaHistory) processed(r string, n int, says bool, call, ret int64) {
	h.client++
	h.ops = append(h.ops, Operation{Client: h.client, Kind: KindIsProcessed, Execution: "e", Replica: r,
		Input: Input{EventID: "ev" + itoa(int64(n))}, Output: Output{Outcome: OutcomeOK, Processed: says}, Call: call, Return: ret})
}

// TestReplicaReadsArePrefixStates: every replica read, of any table, must
// show a state some prefix of the commits produces, never less than the
// same replica showed before (of any table), and with read-your-writes
// never less than its own writes. Stale is allowed, torn is not.
func TestReplicaReadsArePrefixStates(t *testing.T) {
	checkReplicaCases(t, sideHistory, []replicaCase{
		{"stale side reads are allowed", func(h *replicaHistory) {
			h.outbox("r2", false, 100, 110, 1)
			h.timers("r2", false, 10, 112, 114, 1)
			h.trace("r2", false, 116, 118, 1)
			h.load("r2", false, false, 1, "t1", 120, 130)
			h.load("r2", false, false, 2, "t2", 140, 150)
			h.outbox("r2", false, 160, 170, 1, 2)
		}, nil},
		{"one outbox read showing v2's entry without v1's", func(h *replicaHistory) {
			h.outbox("r2", false, 100, 110, 2)
		}, ErrAtomicity},
		{"an entry acknowledged before the read returned may be gone", func(h *replicaHistory) {
			h.client++
			h.ops = append(h.ops, Operation{Client: h.client, Kind: KindAckOutbox, Input: Input{Seq: 1}, Output: Output{Outcome: OutcomeOK}, Call: 90, Return: 95})
			h.outbox("r2", false, 100, 110, 2)
			h.ops[3].Output.Outbox = h.ops[3].Output.Outbox[1:] // the heal read: t1/e acknowledged
		}, nil},
		{"the row at v2, then the outbox without v2's entry", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.outbox("r2", false, 120, 130, 1)
		}, ErrReplicaRead},
		{"overlapping reads may see either order", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 125)
			h.outbox("r2", false, 120, 130, 1)
		}, nil},
		{"the outbox with v2's entry, then the row at v1", func(h *replicaHistory) {
			h.outbox("r2", false, 100, 110, 1, 2)
			h.load("r2", false, false, 1, "t1", 120, 130)
		}, ErrReplicaRead},
		{"the outbox with v2's entry, then v2's event not processed", func(h *replicaHistory) {
			h.outbox("r2", false, 100, 110, 1, 2)
			h.processed("r2", 2, false, 120, 130)
		}, ErrReplicaRead},
		{"the outbox missing the replica's own acknowledged write", func(h *replicaHistory) {
			h.outbox("r1", false, 100, 110, 1) // r1 wrote v2, acknowledged at 40
			h.ops[len(h.ops)-1].ReadYourWrites = true
		}, ErrReplicaRead},
		{"the row at v2, then v1's timer, which v2 re-armed", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.timers("r2", false, 10, 120, 130, 1)
		}, ErrReplicaRead},
		{"the row at v2, then no due timer", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.timers("r2", false, 10, 120, 130, 0)
		}, ErrReplicaRead},
		{"the row at v2, then no timer due before v2's fires", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.timers("r2", false, 1.5, 120, 130, 0)
		}, nil},
		{"the row at v1, then no due timer: the replica may be at v2, which re-armed it beyond now", func(h *replicaHistory) {
			h.load("r2", false, false, 1, "t1", 100, 110)
			h.timers("r2", false, 1.5, 120, 130, 0)
		}, nil},
		{"the row at v2, then a trace ring without v2's step", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.trace("r2", false, 120, 130, 1)
		}, ErrReplicaRead},
		{"another replica may be behind", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.outbox("r3", false, 120, 130, 1)
		}, nil},
	})
}

// TestLowestCarrierCounts: two winners may carry one event (a commit
// writes its processed event id once, whatever the ledger holds), and a
// replica that says it is processed once the first has returned shows no
// more than the first winner. The replica rules must take the lowest
// carrier: a later one, called after the read returned, would make the
// read look like one from the future.
func TestLowestCarrierCounts(t *testing.T) {
	h := sideHistory()
	h.ops[1].Input.EventID = "ev1"     // t2 (v2, called at 30) carries ev1 as t1 (v1, acked at 20) does
	h.processed("r2", 1, true, 22, 25) // returned before t2 was called
	wantReplicaVerdict(t, h, nil)
}

// TestTableReadsOnReplicasAreChecked: a replica's reads of whole tables
// (outbox, due timers) belong to no one execution, and are held to the
// prefix rules against every known chain: the note of reads not checked
// must not count them. A replica load of an execution whose chain is
// unknown is not checked, and is counted.
func TestTableReadsOnReplicasAreChecked(t *testing.T) {
	h := sideHistory()
	h.outbox("r2", false, 100, 110, 1)
	h.timers("r2", false, 10, 112, 114, 1)
	rep := checkReplica(t, h)
	if rep.Verdict != Ok || rep.Replica == nil || rep.Replica.Unchecked != 0 {
		t.Fatalf("verdict %s, replica stats %+v, notes %q: want Ok with every replica read checked", rep.Verdict, rep.Replica, rep.Notes)
	}
	h.client++
	h.ops = append(h.ops, Operation{Client: h.client, Kind: KindLoad, Execution: "nobody", Replica: "r2",
		Output: Output{Outcome: OutcomeOK}, Call: 120, Return: 130})
	if rep := checkReplica(t, h); rep.Replica == nil || rep.Replica.Unchecked != 1 {
		t.Fatalf("replica stats %+v: want the load of an execution with no known chain counted as not checked", rep.Replica)
	}
	// No chain known at all (the final row is no attempt's): the reads of
	// whole tables check nothing either, and are counted.
	h = sideHistory()
	h.ops[2].Output.Data = data("ghost")
	h.outbox("r2", false, 100, 110, 1)
	h.timers("r2", false, 10, 112, 114, 1)
	if rep := checkReplica(t, h); !errors.Is(rep.Err, ErrPhantom) || rep.Replica == nil || rep.Replica.Unchecked != 2 {
		t.Fatalf("verdict %v, replica stats %+v: want the phantom final row, and both table reads counted as not checked when no chain is known", rep.Err, rep.Replica)
	}
}
