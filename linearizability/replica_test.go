package linearizability

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// replicaHistory builds small histories by hand: commits on execution "e"
// through named replicas, replica and primary loads, and heal reads. Times
// are whatever the test gives; every data id is "<token>#0".
type replicaHistory struct {
	ops    []Operation
	client int
}

func data(token string) string { return token + "#0" }

// commit records a commit of token from version from (prev names the
// token at from) by a client of replica r, called at call and returning at
// ret with outcome out.
func (h *replicaHistory) commit(r string, ryw bool, token, prev string, from, call, ret int64, out Outcome, found *int64) {
	h.client++
	h.ops = append(h.ops, Operation{
		Client: h.client, Kind: KindCommit, Execution: "e", Replica: r, ReadYourWrites: ryw && r != "",
		Input:  Input{Expected: from, Data: data(token), Prev: prev},
		Output: Output{Outcome: out, Found: found}, Call: call, Return: ret,
	})
}

// load records a load of "e" showing version v written by token (v 0: no
// row), through replica r ("" for the primary).
func (h *replicaHistory) load(r string, ryw, heal bool, v int64, token string, call, ret int64) {
	h.client++
	out := Output{Outcome: OutcomeOK}
	if v > 0 {
		out.Exists, out.Version, out.Data = true, v, data(token)
	}
	h.ops = append(h.ops, Operation{Client: h.client, Kind: KindLoad, Execution: "e", Replica: r,
		ReadYourWrites: ryw && r != "", Heal: heal, Output: out, Call: call, Return: ret})
}

// base is two commits, t1 (v1) by r0 and t2 (v2) by r1, both acknowledged
// by time 40, and the primary's heal load at v2.
func base() *replicaHistory {
	h := &replicaHistory{}
	h.commit("r0", true, "t1", "", 0, 10, 20, OutcomeOK, nil)
	h.commit("r1", true, "t2", "t1", 1, 30, 40, OutcomeOK, nil)
	h.load("", false, true, 2, "t2", 1000, 1001)
	return h
}

func checkReplica(t *testing.T, h *replicaHistory) *Report {
	t.Helper()
	rep, err := Check(context.Background(), History{Meta: DefaultMeta(), Ops: h.ops}, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// wantReplicaVerdict fails t unless h checks Ok (want nil) or breaks want.
func wantReplicaVerdict(t *testing.T, h *replicaHistory, want error) {
	t.Helper()
	rep := checkReplica(t, h)
	switch {
	case want == nil && rep.Verdict != Ok:
		t.Fatalf("verdict %s: %v", rep.Verdict, rep.Err)
	case want != nil && !errors.Is(rep.Err, want):
		t.Fatalf("verdict %s, err %v; want %v", rep.Verdict, rep.Err, want)
	case want != nil:
		t.Logf("%v", rep.Err)
	}
}

// replicaCase is what a test adds to a replica history, and the
// guarantee that breaks (nil: the history stays Ok).
type replicaCase struct {
	name  string
	build func(h *replicaHistory)
	want  error
}

// checkReplicaCases checks each case's additions to a fresh history from
// start.
func checkReplicaCases(t *testing.T, start func() *replicaHistory, cases []replicaCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := start()
			c.build(h)
			wantReplicaVerdict(t, h, c.want)
		})
	}
}

func TestReplicaRules(t *testing.T) {
	two := int64(2)
	checkReplicaCases(t, base, []replicaCase{
		{"a stale read is allowed", func(h *replicaHistory) {
			h.load("r0", true, false, 1, "t1", 100, 110) // v2 acknowledged at 40
		}, nil},
		{"a spurious conflict finding the primary's version is allowed", func(h *replicaHistory) {
			h.load("r0", true, false, 1, "t1", 100, 110)
			h.commit("r0", true, "t3", "t1", 1, 120, 130, OutcomeConflict, &two)
		}, nil},
		{"a conflict finding the replica's version is not", func(h *replicaHistory) {
			one := int64(1)
			h.commit("r0", true, "t3", "t1", 0, 120, 130, OutcomeConflict, &one)
		}, ErrLinearizability},
		{"going back in time", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 110)
			h.load("r2", false, false, 1, "t1", 120, 130)
		}, ErrReplicaRead},
		{"overlapping reads may see either order", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 100, 130)
			h.load("r2", false, false, 1, "t1", 120, 140)
		}, nil},
		{"missing an own write with read-your-writes", func(h *replicaHistory) {
			h.load("r1", true, false, 1, "t1", 100, 110) // r1 wrote v2 at 40
		}, ErrReplicaRead},
		{"missing an own write without read-your-writes", func(h *replicaHistory) {
			h.ops[1].ReadYourWrites = false
			h.load("r1", false, false, 1, "t1", 100, 110)
		}, nil},
		{"a version nobody committed", func(h *replicaHistory) {
			h.load("r0", true, false, 2, "t9", 100, 110)
		}, ErrReplicaRead},
		{"a version from the future", func(h *replicaHistory) {
			h.load("r2", false, false, 2, "t2", 25, 28) // t2 was called at 30
		}, ErrReplicaRead},
		{"a replica that never catches up", func(h *replicaHistory) {
			h.load("r0", true, true, 1, "t1", 1002, 1003)
		}, ErrReplicaConvergence},
		{"a replica that caught up", func(h *replicaHistory) {
			h.load("r0", true, true, 2, "t2", 1002, 1003)
		}, nil},
		{"two winners from one version are still a lost update", func(h *replicaHistory) {
			h.commit("r0", true, "t3", "t2", 2, 50, 60, OutcomeOK, nil)
			h.commit("r1", true, "t4", "t2", 2, 55, 65, OutcomeOK, nil)
			h.ops[2].Output.Version, h.ops[2].Output.Data = 3, data("t4")
		}, ErrLostUpdate},
	})
}

// TestStrictReadsUnchanged: the same stale load from no replica is a
// linearizability violation, as before replica reads existed.
func TestStrictReadsUnchanged(t *testing.T) {
	h := base()
	h.load("", false, false, 1, "t1", 100, 110)
	if rep := checkReplica(t, h); !errors.Is(rep.Err, ErrLinearizability) {
		t.Fatalf("a stale primary read passed: %s %v", rep.Verdict, rep.Err)
	}
}

// TestStaleness measures how far behind a stale replica load was.
func TestStaleness(t *testing.T) {
	h := base()
	h.load("r0", true, false, 1, "t1", 100, 110)
	h.load("r0", true, false, 2, "t2", 120, 130)
	rep := checkReplica(t, h)
	st := rep.Replica
	if st == nil || st.Reads != 2 || len(st.Stale) != 1 {
		t.Fatalf("replica stats %+v", st)
	}
	if s := st.Stale[0]; s.Op != 3 || s.Behind != 1 || s.By != 60 || st.MaxStaleness != 60 || st.MaxBehind != 1 {
		t.Errorf("stale read %+v (max %v, %d), want op 3, 1 behind, by 60ns", s, st.MaxStaleness, st.MaxBehind)
	}
}

// TestReplicaFieldsRoundTrip: the new fields survive JSON lines, and an old
// history (without them) reads as before.
func TestReplicaFieldsRoundTrip(t *testing.T) {
	h := base()
	h.load("r0", true, false, 1, "t1", 100, 110)
	dir := t.TempDir()
	path := fmt.Sprintf("%s/h.jsonl", dir)
	if err := SaveFile(path, History{Meta: DefaultMeta(), Ops: h.ops}); err != nil {
		t.Fatal(err)
	}
	back, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Ops[3]; got.Replica != "r0" || !got.ReadYourWrites {
		t.Errorf("read back %+v", got)
	}
	bad := back
	bad.Ops[2].Replica, bad.Ops[2].ReadYourWrites = "", true
	if err := Validate(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("read-your-writes without a replica: %v", err)
	}
}

// TestReplicaQueueReads: a replica's pending_outbox read may still show an
// entry acknowledged since, and may miss one committed since; neither is a
// violation, and an acknowledgement of a seq only a replica's read showed
// is still tied to its entry. An entry of a commit that lost is a
// violation whoever shows it.
func TestReplicaQueueReads(t *testing.T) {
	emit := func(h *replicaHistory, id string) {
		h.ops[len(h.ops)-1].Input.Emits = []EmitRef{{EventID: id}}
	}
	pending := func(h *replicaHistory, r string, heal bool, call int64, items ...OutboxItem) {
		h.client++
		h.ops = append(h.ops, Operation{Client: h.client, Kind: KindPendingOutbox, Replica: r, Heal: heal,
			Output: Output{Outcome: OutcomeOK, Outbox: items}, Call: call, Return: call + 5})
	}
	ack := func(h *replicaHistory, seq, call int64) {
		h.client++
		h.ops = append(h.ops, Operation{Client: h.client, Kind: KindAckOutbox, Input: Input{Seq: seq},
			Output: Output{Outcome: OutcomeOK}, Call: call, Return: call + 5})
	}
	build := func() *replicaHistory {
		h := &replicaHistory{}
		h.commit("r0", true, "t1", "", 0, 10, 20, OutcomeOK, nil)
		emit(h, "m1")
		h.commit("r1", true, "t2", "t1", 1, 30, 40, OutcomeOK, nil)
		emit(h, "m2")
		h.load("", false, true, 2, "t2", 1000, 1001)
		return h
	}
	t.Run("stale reads and an ack known from a replica read", func(t *testing.T) {
		h := build()
		pending(h, "r0", false, 50, OutboxItem{Seq: 1, EventID: "m1"}) // misses m2, committed at 40
		ack(h, 1, 60)
		pending(h, "r1", false, 70, OutboxItem{Seq: 1, EventID: "m1"}, OutboxItem{Seq: 2, EventID: "m2"}) // m1 acked at 65
		pending(h, "", true, 1010, OutboxItem{Seq: 2, EventID: "m2"})
		if rep := checkReplica(t, h); rep.Verdict != Ok {
			t.Fatalf("verdict %s: %v", rep.Verdict, rep.Violations)
		}
	})
	t.Run("a replica showing a losing commit's emit", func(t *testing.T) {
		h := build()
		h.commit("r2", true, "t9", "", 0, 50, 60, OutcomeConflict, ptr(int64(2)))
		emit(h, "m9")
		pending(h, "r2", false, 70, OutboxItem{Seq: 1, EventID: "m1"}, OutboxItem{Seq: 2, EventID: "m2"}, OutboxItem{Seq: 3, EventID: "m9"})
		pending(h, "", true, 1010, OutboxItem{Seq: 1, EventID: "m1"}, OutboxItem{Seq: 2, EventID: "m2"})
		rep := checkReplica(t, h)
		if rep.Verdict != Illegal || !errors.Is(rep.Err, ErrAtomicity) {
			t.Fatalf("verdict %s (%v): want an atomicity violation", rep.Verdict, rep.Violations)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestQueueStaleReadIsNotALoss: a primary's read (say, at a level that
// reads a follower) that misses an entry still pending at the end, or
// shows one acknowledged before it, is a stale read; an entry that really
// disappears unacknowledged is a lost delivery.
func TestQueueStaleReadIsNotALoss(t *testing.T) {
	emit := func(h *replicaHistory, id string) {
		h.ops[len(h.ops)-1].Input.Emits = []EmitRef{{EventID: id}}
	}
	pending := func(h *replicaHistory, heal bool, call int64, items ...OutboxItem) {
		h.client++
		h.ops = append(h.ops, Operation{Client: h.client, Kind: KindPendingOutbox, Heal: heal,
			Output: Output{Outcome: OutcomeOK, Outbox: items}, Call: call, Return: call + 5})
	}
	ack := func(h *replicaHistory, seq, call int64) {
		h.client++
		h.ops = append(h.ops, Operation{Client: h.client, Kind: KindAckOutbox, Input: Input{Seq: seq},
			Output: Output{Outcome: OutcomeOK}, Call: call, Return: call + 5})
	}
	build := func() *replicaHistory {
		h := &replicaHistory{}
		h.commit("", false, "t1", "", 0, 10, 20, OutcomeOK, nil)
		emit(h, "m1")
		h.commit("", false, "t2", "t1", 1, 30, 40, OutcomeOK, nil)
		emit(h, "m2")
		h.load("", false, true, 2, "t2", 1000, 1001)
		pending(h, false, 50, OutboxItem{Seq: 1, EventID: "m1"}, OutboxItem{Seq: 2, EventID: "m2"})
		return h
	}
	cases := []struct {
		name string
		add  func(h *replicaHistory)
		want error
	}{
		{"misses an entry still pending at the end", func(h *replicaHistory) {
			pending(h, false, 60, OutboxItem{Seq: 1, EventID: "m1"})
			pending(h, true, 1010, OutboxItem{Seq: 1, EventID: "m1"}, OutboxItem{Seq: 2, EventID: "m2"})
		}, ErrStaleRead},
		{"shows an entry acknowledged before it", func(h *replicaHistory) {
			ack(h, 2, 60)
			pending(h, false, 80, OutboxItem{Seq: 1, EventID: "m1"}, OutboxItem{Seq: 2, EventID: "m2"})
			pending(h, true, 1010, OutboxItem{Seq: 1, EventID: "m1"})
		}, ErrStaleRead},
		{"an entry that vanished unacknowledged", func(h *replicaHistory) {
			pending(h, false, 60, OutboxItem{Seq: 1, EventID: "m1"})
			pending(h, true, 1010, OutboxItem{Seq: 1, EventID: "m1"})
		}, ErrLostDelivery},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := build()
			c.add(h)
			rep := checkReplica(t, h)
			if !errors.Is(rep.Err, c.want) {
				t.Fatalf("want %v, got %v", c.want, rep.Violations)
			}
			if c.want == ErrStaleRead && (errors.Is(rep.Err, ErrLostDelivery) || errors.Is(rep.Err, ErrDuplicateDelivery)) {
				t.Errorf("a stale read also reported as a loss or a duplicate: %v", rep.Violations)
			}
		})
	}
}
