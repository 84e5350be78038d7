package lagsim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestTornReplicaReadsItsOwnWritesWhole: a scheduled refresh of a torn
// replica that lands while its client's write is being counted, after
// the primary took it, must not leave the side tables behind the write:
// the client's read-your-writes sync that follows is skipped (the count
// has not moved since that refresh began), so the client would read its
// own write torn, which only other clients' commits may be.
func TestTornReplicaReadsItsOwnWritesWhole(t *testing.T) {
	ctx := context.Background()
	c, err := OpenCluster(ctx, filepath.Join(t.TempDir(), "p.db"), model.DefaultConfig(), Options{Lag: noSyncs, Mutant: MutantTornReplica})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	torn, err := openTorn(ctx, c.path, c.cfg, "r0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := torn.Close(); err != nil {
			t.Error(err)
		}
	})
	sync := c.syncer(torn.refresh, func() error { return nil })
	// The scheduled refresh, run as the write is counted, before it returns.
	racing := func(fn func() error) error {
		err := c.write(fn)
		if err := sync(ctx); err != nil {
			t.Fatal(err)
		}
		return err
	}
	write := ownWrites(racing, torn)
	b := model.Batch{Emits: []model.Emit{{Event: model.Event{ID: "ev1", Name: "n"}}}}
	if err := write(func() error { return c.primary.Commit(ctx, exe("e", 0), b) }); err != nil {
		t.Fatal(err)
	}
	if err := sync(ctx); err != nil { // the client's read-your-writes sync
		t.Fatal(err)
	}
	got, err := torn.PendingOutbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Event.ID != "ev1" {
		t.Errorf("the client's own commit's emit: pending outbox %+v, want ev1", got)
	}
	if exe, err := torn.Load(ctx, "e"); err != nil || exe == nil || exe.Version != 1 {
		t.Errorf("the client's own commit's row: %+v, %v, want v1", exe, err)
	}
}
