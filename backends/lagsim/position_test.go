package lagsim

import (
	"context"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// positions returns the primary's position and replica name's.
func positions(t *testing.T, c *Cluster, name string) (primary, replica int64) {
	t.Helper()
	primary, err := c.PrimaryPosition(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	replica, ok := c.Position(name)
	if !ok {
		t.Fatalf("replica %s reports no position", name)
	}
	return primary, replica
}

// diff compares replica name's own tables with the primary's.
func diff(t *testing.T, c *Cluster, name string) []string {
	t.Helper()
	ctx := context.Background()
	want, err := c.Primary().(model.Dumper).Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.LocalDump(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return model.Diff(want, got, model.DiffOptions{ExactSeqs: true, Limit: 3})
}

// TestPositionIsWhatTheReplicaHolds: a replica's position and tables are
// those of the state it holds: behind the primary until it syncs, the
// primary's after.
func TestPositionIsWhatTheReplicaHolds(t *testing.T) {
	ctx := context.Background()
	c, r0, _ := openCluster(t, Options{Lag: noSyncs})
	if at, got := positions(t, c, "r1"); got != at || len(diff(t, c, "r1")) > 0 {
		t.Fatalf("a fresh replica: position %d, the primary's %d; diff %v", got, at, diff(t, c, "r1"))
	}
	if err := r0.Commit(ctx, exe("e", 0), model.Batch{Emits: []model.Emit{{Event: model.Event{ID: "x", Name: "n"}}}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r0", "r1"} { // no read-your-writes: r0 did not sync either
		if at, got := positions(t, c, name); got >= at || len(diff(t, c, name)) == 0 {
			t.Errorf("%s before a sync: position %d, the primary's %d, diff %v; want behind and different", name, got, at, diff(t, c, name))
		}
	}
	if err := r0.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if at, got := positions(t, c, "r0"); got != at || len(diff(t, c, "r0")) > 0 {
		t.Errorf("r0 after its sync: position %d, the primary's %d, diff %v", got, at, diff(t, c, "r0"))
	}
	if _, ok := c.Position("r9"); ok {
		t.Error("a replica that does not exist reports a position")
	}
	if _, err := c.LocalDump(ctx, "r9"); err == nil {
		t.Error("a replica that does not exist was dumped")
	}
}

// TestShortSyncStopsShort: mutant=short-sync's sync succeeds and leaves the
// replica at the state of its previous sync, short of the primary, and a
// sync with nothing written since leaves it there; its own writes it holds.
func TestShortSyncStopsShort(t *testing.T) {
	ctx := context.Background()
	c, r0, r1 := openCluster(t, Options{Lag: noSyncs, ReadYourWrites: true, Mutant: MutantShortSync})
	if err := r0.Commit(ctx, exe("e", 0), model.Batch{}); err != nil {
		t.Fatal(err)
	}
	if at, got := positions(t, c, "r0"); got != at {
		t.Errorf("the writer's replica after its own write: position %d, the primary's %d", got, at)
	}
	for range 2 {
		if err := r1.Sync(ctx); err != nil {
			t.Fatalf("the sync must report success: %v", err)
		}
		if at, got := positions(t, c, "r1"); got >= at || len(diff(t, c, "r1")) == 0 {
			t.Errorf("r1 after a sync: position %d, the primary's %d, diff %v; want short of the primary", got, at, diff(t, c, "r1"))
		}
		if got, _ := r1.Load(ctx, "e"); got != nil {
			t.Errorf("r1 loads %+v; its sync stopped short of it", got)
		}
	}
}

// TestTornReplicaHoldsTwoStates: a torn replica's tables are its rows'
// snapshot and its side tables', and its position the older one's.
func TestTornReplicaHoldsTwoStates(t *testing.T) {
	ctx := context.Background()
	c, r0, r1 := openCluster(t, Options{Lag: noSyncs, ReadYourWrites: true, Mutant: MutantTornReplica})
	if err := r0.Commit(ctx, exe("e", 0), model.Batch{Emits: []model.Emit{{Event: model.Event{ID: "x", Name: "n"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := r1.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := c.LocalDump(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Executions) != 1 || len(got.Outbox) != 0 {
		t.Errorf("r1 holds %d executions and %d outbox rows; want the row without its emit", len(got.Executions), len(got.Outbox))
	}
	if at, pos := positions(t, c, "r1"); pos >= at {
		t.Errorf("r1 at position %d, the primary at %d; want the side tables' older one", pos, at)
	}
}
