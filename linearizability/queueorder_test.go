package linearizability

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// twoExecutionsHistory records, through the reference, a commit on e1 (a,
// two emits and a spawn) that returns before a commit on e2 (b, one emit
// and a spawn) is called, then the heal reads: the reference numbers a's
// entries 1, 2 and b's 3 (spawns a 1, b 2).
func twoExecutionsHistory(t *testing.T) History {
	t.Helper()
	ctx := context.Background()
	rec := NewRecorder(model.NewReference(model.DefaultConfig()))
	c1, c2 := rec.Client(), rec.Client()
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
	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	return rec.History()
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
	base := twoExecutionsHistory(t)
	if rep, err := Check(context.Background(), base, Options{}); err != nil || rep.Verdict != Ok {
		t.Fatalf("base history: %v %v", err, rep.Err)
	}
	tests := []struct {
		name   string
		mutate func(h *History)
		want   error // nil: the history is legal
	}{
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
	}
	for _, tt := range tests {
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

// loadBetweenHistory records a commit on e1 (a: two emits and a spawn), a
// commit on e2 (b: one emit and a spawn), then a load of e1 by a third
// client, then the heal reads: the reference numbers a's entries 1, 2 and
// b's 3 (spawns a 1, b 2), and the load shows a's version.
func loadBetweenHistory(t *testing.T) History {
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
	if _, err := c3.Load(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	return rec.History()
}

// TestQueueFollowsTheLoads: a load of e1 called after b returned that finds
// no e1 shows that a, still running, took effect after b, so a's entries
// must come after b's, though the two commits overlap (a store that takes
// its seqs before the commit's transaction). A load that overlaps b tells
// nothing.
func TestQueueFollowsTheLoads(t *testing.T) {
	base := loadBetweenHistory(t)
	if rep, err := Check(context.Background(), base, Options{}); err != nil || rep.Verdict != Ok {
		t.Fatalf("base history: %v %v", err, rep.Err)
	}
	// a is called first and returns after the load, which finds no e1.
	overlap := func(h *History) *Operation {
		a, l := commitOp(t, h, "a"), readOp(t, h, KindLoad)
		a.Return = l.Return + 1
		l.Output.Exists, l.Output.Version, l.Output.Data = false, 0, ""
		return l
	}
	tests := []struct {
		name   string
		mutate func(h *History)
		want   error // nil: the history is legal
	}{
		{"a load after b returned finds a not taken effect", func(h *History) { overlap(h) }, ErrDeliveryOrder},
		{"the load overlaps b", func(h *History) {
			l := overlap(h)
			b := commitOp(t, h, "b")
			b.Return = l.Call + 1
		}, nil},
	}
	for _, tt := range tests {
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

// readBetweenHistory records a commit on e1 (a: two emits and a spawn), a
// commit on e2 (b: one emit and a spawn), then a read of each queue by a
// third client, then the heal reads: the reference numbers a's entries 1,
// 2 and b's 3 (spawns a 1, b 2), and the reads list them all.
func readBetweenHistory(t *testing.T) History {
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
	if _, err := c3.PendingOutbox(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c3.PendingSpawns(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	return rec.History()
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
	base := readBetweenHistory(t)
	if rep, err := Check(context.Background(), base, Options{}); err != nil || rep.Verdict != Ok {
		t.Fatalf("base history: %v %v", err, rep.Err)
	}
	// a is called first and returns after both reads: it overlaps b and
	// the reads, which list b's entries only.
	overlap := func(h *History) {
		a, o, s := commitOp(t, h, "a"), readOp(t, h, KindPendingOutbox), readOp(t, h, KindPendingSpawns)
		a.Return = s.Return + 1
		o.Output.Outbox = []OutboxItem{{Seq: 3, EventID: "b/e0"}}
		s.Output.Spawns = []SpawnItem{{Seq: 2, Parent: "e2", Child: "b/s0"}}
	}
	tests := []struct {
		name   string
		mutate func(h *History)
		want   error // nil: the history is legal
	}{
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
		{"a's entries numbered after b's", func(h *History) {
			overlap(h)
			o := healOp(t, h, KindPendingOutbox, "")
			o.Output.Outbox = []OutboxItem{{Seq: 3, EventID: "b/e0"}, {Seq: 4, EventID: "a/e0"}, {Seq: 5, EventID: "a/e1"}}
			s := healOp(t, h, KindPendingSpawns, "")
			s.Output.Spawns = []SpawnItem{{Seq: 2, Parent: "e2", Child: "b/s0"}, {Seq: 3, Parent: "e1", Child: "a/s0"}}
		}, nil},
	}
	for _, tt := range tests {
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
