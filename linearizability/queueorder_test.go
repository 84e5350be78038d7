package linearizability

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// twoExecutionsHistory records, through the reference, a commit on e1 (a,
// two emits and a spawn), then a commit on e2 (b, one emit and a spawn),
// then whatever between does with a third client, then the heal reads: the
// reference numbers a's entries 1, 2 and b's 3 (spawns a 1, b 2).
func twoExecutionsHistory(t *testing.T, between func(ctx context.Context, c *Client) error) History {
	t.Helper()
	ctx := context.Background()
	rec := NewRecorder(model.NewReference(model.DefaultConfig()))
	c1, c2, c3 := rec.Client(), rec.Client(), rec.Client()
	batch := func(tok string, emits int) model.Batch {
		b := model.Batch{Spawns: []model.Spawn{{ChildID: tok + "/s0", RootPath: "r"}}}
		for i := range emits {
			b.Emits = append(b.Emits, model.Emit{Event: model.Event{ID: tok + "/e" + itoa(int64(i)), Name: "n"}})
		}
		return b
	}
	if err := c1.Commit(ctx, witnessed("e1", "a", "", 0), batch("a", 2)); err != nil {
		t.Fatal(err)
	}
	if err := c2.Commit(ctx, witnessed("e2", "b", "", 0), batch("b", 1)); err != nil {
		t.Fatal(err)
	}
	if between != nil {
		if err := between(ctx, c3); err != nil {
			t.Fatal(err)
		}
	}
	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	return rec.History()
}

// mutationCase is a change to a legal history and the guarantee it breaks
// (nil: it stays legal).
type mutationCase struct {
	name   string
	mutate func(h *History)
	want   error
}

// checkMutations checks that base is legal, then each case's change to a
// copy of it.
func checkMutations(t *testing.T, base History, cases []mutationCase) {
	t.Helper()
	if rep, err := Check(context.Background(), base, Options{}); err != nil || rep.Verdict != Ok {
		t.Fatalf("base history: %v %v", err, rep.Err)
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			h := History{Meta: base.Meta, Ops: slices.Clone(base.Ops)}
			tt.mutate(&h)
			rep, err := Check(context.Background(), h, Options{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == nil && rep.Verdict != Ok:
				t.Fatalf("verdict %s, want Ok: %v", rep.Verdict, rep.Err)
			case tt.want != nil && (rep.Verdict != Illegal || !errors.Is(rep.Err, tt.want)):
				t.Fatalf("verdict %s, want Illegal naming %q; got %v", rep.Verdict, tt.want, rep.Err)
			}
			t.Log(rep.Err)
		})
	}
}

// renumber gives b's entries the lowest seqs and a's the ones after, as a
// store whose seqs do not follow real time would list them.
func renumber(t *testing.T, h *History) {
	t.Helper()
	o := healOp(t, h, KindPendingOutbox, "")
	o.Output.Outbox = []OutboxItem{{Seq: 1, EventID: "b/e0"}, {Seq: 2, EventID: "a/e0"}, {Seq: 3, EventID: "a/e1"}}
	s := healOp(t, h, KindPendingSpawns, "")
	s.Output.Spawns = []SpawnItem{{Seq: 1, Parent: "e2", Child: "b/s0"}, {Seq: 2, Parent: "e1", Child: "a/s0"}}
}

// TestQueueFollowsRealTimeAcrossExecutions: a commit that returned before
// another was called has its entries pending before the other's, whichever
// executions they advance (docs/CONTRACT.md §1, property 6, "in order");
// commits that overlap may take effect, and number their entries, in
// either order; an indeterminate commit nothing showed before may have
// taken effect at any time.
func TestQueueFollowsRealTimeAcrossExecutions(t *testing.T) {
	checkMutations(t, twoExecutionsHistory(t, nil), []mutationCase{
		{"later commit's entries listed first", func(h *History) { renumber(t, h) }, ErrDeliveryOrder},
		{"later commit's spawn listed first", func(h *History) {
			s := healOp(t, h, KindPendingSpawns, "")
			s.Output.Spawns = []SpawnItem{{Seq: 1, Parent: "e2", Child: "b/s0"}, {Seq: 2, Parent: "e1", Child: "a/s0"}}
		}, ErrDeliveryOrder},
		{"overlapping commits in either order", func(h *History) {
			renumber(t, h)
			a, b := commitOp(t, h, "a"), commitOp(t, h, "b")
			a.Return = b.Call + 1
		}, nil},
		{"indeterminate earlier commit", func(h *History) {
			renumber(t, h)
			a := commitOp(t, h, "a")
			a.Output = Output{Outcome: OutcomeIndeterminate, Error: "timeout"}
		}, nil},
	})
}

// TestQueueFollowsTheLoads: a load of e1 called after b returned that finds
// no e1 shows that a, still running, took effect after b, so a's entries
// must come after b's, though the two commits overlap (a store that takes
// its seqs before the commit's transaction). A load that overlaps b tells
// nothing.
func TestQueueFollowsTheLoads(t *testing.T) {
	// Between b and the heal a third client loads e1 (and sees a's
	// version).
	base := twoExecutionsHistory(t, func(ctx context.Context, c *Client) error {
		_, err := c.Load(ctx, "e1")
		return err
	})
	// a is called first and returns after the load, which finds no e1.
	overlap := func(h *History) *Operation {
		a, l := commitOp(t, h, "a"), readOp(t, h, KindLoad)
		a.Return = l.Return + 1
		l.Output.Exists, l.Output.Version, l.Output.Data = false, 0, ""
		return l
	}
	checkMutations(t, base, []mutationCase{
		{"a load after b returned finds a not taken effect", func(h *History) { overlap(h) }, ErrDeliveryOrder},
		{"the load overlaps b", func(h *History) {
			l := overlap(h)
			b := commitOp(t, h, "b")
			b.Return = l.Call + 1
		}, nil},
	})
}

// readOp returns the first read of kind that is not a heal read.
func readOp(t *testing.T, h *History, kind Kind) *Operation {
	t.Helper()
	for i := range h.Ops {
		if op := &h.Ops[i]; op.Kind == kind && !op.Heal {
			op.Output.Outbox = slices.Clone(op.Output.Outbox)
			op.Output.Spawns = slices.Clone(op.Output.Spawns)
			return op
		}
	}
	t.Fatalf("no %s", kind)
	return nil
}

// TestQueueFollowsTheReads: a read that lists b's entries but not a's,
// while a's commit is still running, shows that a took effect after b, so
// a's entries must come after b's in the queue, though the two commits
// overlap and real time orders nothing (a store that takes its seqs before
// the commit's transaction). A read that lists none of b's entries, or a's
// entries numbered after b's, or a's seq acknowledged before the read, is
// legal.
func TestQueueFollowsTheReads(t *testing.T) {
	// Between b and the heal a third client reads each queue (and lists
	// every entry).
	base := twoExecutionsHistory(t, func(ctx context.Context, c *Client) error {
		if _, err := c.PendingOutbox(ctx); err != nil {
			return err
		}
		_, err := c.PendingSpawns(ctx)
		return err
	})
	// a is called first and returns after both reads: it overlaps b and
	// the reads, which list b's entries only.
	overlap := func(h *History) {
		a, o, s := commitOp(t, h, "a"), readOp(t, h, KindPendingOutbox), readOp(t, h, KindPendingSpawns)
		a.Return = s.Return + 1
		o.Output.Outbox = []OutboxItem{{Seq: 3, EventID: "b/e0"}}
		s.Output.Spawns = []SpawnItem{{Seq: 2, Parent: "e2", Child: "b/s0"}}
	}
	checkMutations(t, base, []mutationCase{
		{"a read lists a later seq before the earlier one exists", overlap, ErrDeliveryOrder},
		{"the spawn queue alike", func(h *History) {
			overlap(h)
			commitOp(t, h, "b").Return = commitOp(t, h, "a").Return
			readOp(t, h, KindPendingOutbox).Output.Outbox = nil
		}, ErrDeliveryOrder},
		{"the reads list none of b's entries", func(h *History) {
			overlap(h)
			commitOp(t, h, "b").Return = commitOp(t, h, "a").Return
			readOp(t, h, KindPendingOutbox).Output.Outbox = nil
			readOp(t, h, KindPendingSpawns).Output.Spawns = nil
		}, nil},
		{"a's seqs acknowledged before the reads (no-ops: a had not taken effect)", func(h *History) {
			overlap(h)
			o := readOp(t, h, KindPendingOutbox)
			at := o.Call - 10
			for _, ack := range []struct {
				kind Kind
				seq  int64
			}{{KindAckOutbox, 1}, {KindAckOutbox, 2}, {KindAckSpawn, 1}} {
				h.Ops = append(h.Ops, Operation{Client: 99, Kind: ack.kind, Input: Input{Seq: ack.seq},
					Output: Output{Outcome: OutcomeOK}, Call: at, Return: at + 1})
				at += 2
			}
		}, nil},
		{"a's entries numbered after b's", func(h *History) {
			overlap(h)
			o := healOp(t, h, KindPendingOutbox, "")
			o.Output.Outbox = []OutboxItem{{Seq: 3, EventID: "b/e0"}, {Seq: 4, EventID: "a/e0"}, {Seq: 5, EventID: "a/e1"}}
			s := healOp(t, h, KindPendingSpawns, "")
			s.Output.Spawns = []SpawnItem{{Seq: 2, Parent: "e2", Child: "b/s0"}, {Seq: 3, Parent: "e1", Child: "a/s0"}}
		}, nil},
	})
}
