package chaos

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestKillDuringSnapshot: a follower is killed once its log shows a
// persisted snapshot, never the leader, and the heal starts it again; a
// follower that persists none in time is left alone, with no hit and no
// heal; a cluster without events cannot have the fault.
func TestKillDuringSnapshot(t *testing.T) {
	ctx := context.Background()
	f := &eventFake{fakeCluster: newFake(), events: map[string][]string{"n2": {"snapshot-persist"}, "n3": {"snapshot-persist"}}}
	inj, err := KillDuringSnapshot{}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.kills) != 1 || f.kills[0] != inj.Target || inj.Target == "n1" || inj.Metrics["persist_kills"] != 1 || !strings.Contains(inj.Detail, "persisted snapshot") {
		t.Fatalf("kills %v, injection %+v; want one follower killed on its persisted snapshot, one hit", f.kills, inj)
	}
	if !f.down[inj.Target] || inj.Heal == nil {
		t.Fatalf("%s down %v, heal %v: want it down until the heal", inj.Target, f.down[inj.Target], inj.Heal != nil)
	}
	if err := inj.Heal(ctx); err != nil || len(f.broken()) != 0 {
		t.Fatalf("heal: %v, still broken: %v", err, f.broken())
	}

	// No persisted snapshot: nothing killed, nothing to heal, no hit.
	f = &eventFake{fakeCluster: newFake(), events: map[string][]string{"n1": {"snapshot-persist"}}}
	inj, err = KillDuringSnapshot{}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil || len(f.kills) != 0 || inj.Heal != nil || inj.Metrics["persist_kills"] != 0 || !strings.Contains(inj.Detail, "nothing killed") {
		t.Fatalf("no snapshot: %v, kills %v, injection %+v", err, f.kills, inj)
	}

	if err := (KillDuringSnapshot{}).Available(newFake()); err == nil {
		t.Error("available on a cluster without events")
	}
}
