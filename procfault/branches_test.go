package procfault

import (
	"context"
	"errors"
	"testing"

	"github.com/storecheck/storecheck/model/runstore"
)

// TestRunsLostBranchComesBack: under NORMAL a later cut may bring back,
// whole and in order, what an earlier cut lost on the same confirmed
// tables, in place of what was written since (the WAL's old frames chain
// again); anything else stays a durability break.
func TestRunsLostBranchComesBack(t *testing.T) {
	ctx := context.Background()
	create := runsOp{Kind: opCreate, Run: "r1", Name: "c0-1", NowMS: 1}
	ev2 := runsOp{Kind: opEvent, Run: "r1", Name: "c0-2", NowMS: 2}
	ev3 := runsOp{Kind: opEvent, Run: "r1", Name: "c0-3", NowMS: 3}
	again := runsOp{Kind: opEvent, Run: "r1", Name: "c1-1", NowMS: 4} // written after cut 1
	later := runsOp{Kind: opEvent, Run: "r1", Name: "c2-1", NowMS: 5} // written after cut 2
	dump := func(ops ...runsOp) *runstore.Dump {
		d, err := replay(ctx, ops)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ack := func(l *runsLedger, ops ...runsOp) {
		for i, op := range ops {
			l.observe(message{Type: msgBegin, N: i + 1, RunsOp: &op})
			l.observe(message{Type: msgAck, N: i + 1})
		}
	}
	type cut struct {
		writes []runsOp
		got    *runstore.Dump
	}
	for _, c := range []struct {
		name           string
		rule           lossRule
		cuts           []cut
		want           error
		cameBack, from int
	}{
		{"the first lost write comes back", keepPrefix, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create)},
			{[]runsOp{again}, dump(create, ev2)},
		}, nil, 1, 1},
		{"the whole lost branch comes back", keepPrefix, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create)},
			{[]runsOp{again}, dump(create, ev2, ev3)},
		}, nil, 2, 1},
		{"a branch two cuts old comes back", keepPrefix, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create)},
			{[]runsOp{again}, dump(create)},
			{[]runsOp{later}, dump(create, ev2)},
		}, nil, 1, 1},
		{"a later write lost then comes back", keepPrefix, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create)},
			{[]runsOp{again}, dump(create)},
			{[]runsOp{later}, dump(create, again)},
		}, nil, 1, 2},
		{"a hole in the lost branch", keepPrefix, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create)},
			{[]runsOp{again}, dump(create, ev3)},
		}, ErrDurability, 0, 0},
		{"a branch on tables that moved since", keepPrefix, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create)},
			{[]runsOp{again, later}, dump(create, again)},
			{nil, dump(create, again, ev2)},
		}, ErrDurability, 0, 0},
		{"full never brings one back", keepAll, []cut{
			{[]runsOp{create, ev2, ev3}, dump(create, ev2, ev3)},
			{[]runsOp{again}, dump(create, ev2, ev3)},
		}, ErrDurability, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &runsLedger{}
			if _, err := l.verify(ctx, c.rule, "ok", dump()); err != nil {
				t.Fatalf("recovery of the empty file: %v", err)
			}
			var found afterCut
			var err error
			for i, cu := range c.cuts {
				ack(l, cu.writes...)
				if found, err = l.verify(ctx, c.rule, "ok", cu.got); err != nil && i < len(c.cuts)-1 {
					t.Fatalf("cut %d: %v", i+1, err)
				}
			}
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			if found.CameBack != c.cameBack || found.LostAt != c.from {
				t.Errorf("%d writes came back from cut %d; want %d from cut %d", found.CameBack, found.LostAt, c.cameBack, c.from)
			}
		})
	}
}

// TestLostBranchWithAHoleIsABreak: on an execution store, the tables of
// a lost branch with a commit missing from its middle are no state the
// writes leave, and fail.
func TestLostBranchWithAHoleIsABreak(t *testing.T) {
	ctx := context.Background()
	c1, c2, c3 := commitOf("k0-1", 0, 11), commitOf("k0-2", 1, 12), commitOf("k0-3", 2, 13)
	again := commitOf("k1-1", 1, 14) // the second commit, redone differently after cut 1
	l := newLedger()
	if _, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t)); err != nil {
		t.Fatalf("recovery of the empty file: %v", err)
	}
	for i, cm := range []*wireCommit{c1, c2, c3} {
		l.observe(message{Type: msgBegin, N: i + 1, Commit: cm})
		l.observe(message{Type: msgAck, N: i + 1})
	}
	found, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t, apply(t, c1, whole)))
	if err != nil || found.Lost != 2 {
		t.Fatalf("cut 1: lost %d, err %v; want 2 lost", found.Lost, err)
	}
	l.observe(message{Type: msgBegin, N: 1, Commit: again})
	l.observe(message{Type: msgAck, N: 1})
	hole := tablesAfter(t, apply(t, c1, whole), apply(t, commitOf("k0-3", 1, 13), whole))
	if _, err := l.verifyCut(ctx, keepPrefix, "ok", hole); !errors.Is(err, ErrDurability) {
		t.Fatalf("a hole in the lost branch: want a durability break, got %v", err)
	}
}

// TestLostBranchComesBackWhole: a commit cut 1 lost comes back at cut 2 in
// place of the one written since, and the ledger then asks for it.
func TestLostBranchComesBackWhole(t *testing.T) {
	ctx := context.Background()
	c1, c2 := commitOf("k0-1", 0, 11), commitOf("k0-2", 1, 12)
	again, next := commitOf("k1-1", 1, 14), commitOf("k2-1", 2, 15)
	l := newLedger()
	if _, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t)); err != nil {
		t.Fatalf("recovery of the empty file: %v", err)
	}
	for i, cm := range []*wireCommit{c1, c2} {
		l.observe(message{Type: msgBegin, N: i + 1, Commit: cm})
		l.observe(message{Type: msgAck, N: i + 1})
	}
	if _, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t, apply(t, c1, whole))); err != nil {
		t.Fatalf("cut 1: %v", err)
	}
	l.observe(message{Type: msgBegin, N: 1, Commit: again})
	l.observe(message{Type: msgAck, N: 1})
	found, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t, apply(t, c1, whole), apply(t, c2, whole)))
	if err != nil || found.CameBack != 1 || found.LostAt != 1 || found.Lost != 1 {
		t.Fatalf("cut 2: %+v, err %v; want k0-2 back from cut 1, k1-1 lost", found, err)
	}
	l.observe(message{Type: msgBegin, N: 1, Commit: next})
	l.observe(message{Type: msgAck, N: 1})
	if _, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t, apply(t, c1, whole), apply(t, c2, whole), apply(t, next, whole))); err != nil {
		t.Fatalf("cut 3, everything kept: %v", err)
	}
	if _, err := l.verifyCut(ctx, keepPrefix, "ok", tablesAfter(t, apply(t, c1, whole))); !errors.Is(err, ErrDurability) {
		t.Fatalf("cut 4, the commit that came back lost again: want a durability break, got %v", err)
	}
}
