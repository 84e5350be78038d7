package linearizability

import "testing"

// removalBy appends an ok ack_outbox of seq (or, with timer set, a
// delete_timer of e/p at fire_at seq) through replica r.
func (h *replicaHistory) removalBy(r string, timer bool, seq int64, call, ret int64) {
	h.client++
	op := Operation{Client: h.client, Kind: KindAckOutbox, Replica: r, ReadYourWrites: r != "", Input: Input{Seq: seq}, Output: Output{Outcome: OutcomeOK}, Call: call, Return: ret}
	if timer {
		op.Kind, op.Execution, op.Input = KindDeleteTimer, "e", Input{Path: "p", FireAt: float64(seq)}
	}
	h.ops = append(h.ops, op)
}

// TestReplicaReadsHoldRemovals: an entry an ack removed, or a timer a
// delete_timer removed, is gone from every state after the call returned;
// a replica lists it only from a state before it, which is no prefix state
// once its replica has shown a commit called after the removal returned,
// or, with read-your-writes, when the removal went through that replica.
// (sideHistory: t1 wrote v1 and t1/e at seq 1, called at 10, returned at
// 20; t2 wrote v2, called at 30.)
func TestReplicaReadsHoldRemovals(t *testing.T) {
	ackFirst := func(h *replicaHistory, r string, call, ret int64) {
		h.removalBy(r, false, 1, call, ret)
		h.ops[3].Output.Outbox = h.ops[3].Output.Outbox[1:] // the heal read: t1/e acknowledged
	}
	checkReplicaCases(t, sideHistory, []replicaCase{
		{"its own ack, then the entry listed (read-your-writes)", func(h *replicaHistory) {
			ackFirst(h, "r2", 22, 25)
			h.outbox("r2", false, 100, 110, 1)
			h.ops[len(h.ops)-1].ReadYourWrites = true
		}, ErrReplicaRead},
		{"another's ack, then the entry listed after a commit called after the ack", func(h *replicaHistory) {
			ackFirst(h, "r3", 22, 25)
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.outbox("r2", false, 120, 130, 1, 2)
		}, ErrReplicaRead},
		{"one read listing the entry and a commit called after its ack", func(h *replicaHistory) {
			ackFirst(h, "r3", 22, 25)
			h.outbox("r2", false, 120, 130, 1, 2)
		}, ErrReplicaRead},
		{"another's ack, a stale replica lists the entry", func(h *replicaHistory) {
			ackFirst(h, "r3", 22, 25)
			h.outbox("r2", false, 100, 110, 1)
		}, nil},
		{"an ack called before the entry's commit returned proves nothing", func(h *replicaHistory) {
			ackFirst(h, "r3", 15, 25)
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.outbox("r2", false, 120, 130, 1, 2)
		}, nil},
		{"an ack still running when the read was called", func(h *replicaHistory) {
			ackFirst(h, "r2", 22, 105)
			h.outbox("r2", false, 100, 110, 1)
			h.ops[len(h.ops)-1].ReadYourWrites = true
		}, nil},
		{"its own delete_timer, then the timer listed (read-your-writes)", func(h *replicaHistory) {
			h.removalBy("r2", true, 1, 22, 25)
			h.timers("r2", false, 10, 100, 110, 1)
			h.ops[len(h.ops)-1].ReadYourWrites = true
		}, ErrReplicaRead},
	})
}
