package mutants

import (
	"context"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// seq-sharded's bug, drawn without a race: e1 commits (shard 1 reserves
// seqs 1–100), then a commit holds shard 1 while e2 commits, so e2 gets
// shard 2 and the block 101–200; e2's commit returns, shard 1 is free
// again, and e1 commits: e1's entry, written after e2's commit returned,
// is listed before it (seq 2 < 101).
func TestSeqShardedListsALaterCommitFirst(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, "seq-sharded", model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := st.(*seqSharded)
	emit := func(name string) model.Batch {
		return model.Batch{Emits: []model.Emit{{Event: model.Event{ID: name, Name: name}}}}
	}
	e1 := &model.Execution{ID: "e1"}
	if err := s.Commit(ctx, e1, emit("first")); err != nil {
		t.Fatal(err)
	}
	held, err := s.shard(ctx, "e3") // shard 1, held by a commit in flight
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, &model.Execution{ID: "e2"}, emit("earlier")); err != nil {
		t.Fatal(err)
	}
	s.release(held) // the commit in flight ends without writing
	if err := s.Commit(ctx, e1, emit("later")); err != nil {
		t.Fatal(err)
	}
	out, err := s.PendingOutbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[1].Event.Name != "later" || out[1].Seq != 2 || out[2].Seq != seqShardBlock+1 {
		t.Fatalf("pending outbox %+v: want the later commit's entry at seq 2, before the earlier one's at %d", out, seqShardBlock+1)
	}
	// What it keeps: were e2 to commit on shard 1 (next seq 3), its entry
	// would not go below its seq 101: shard 1 reserves the next block,
	// 201–300.
	s.used["e2"] = s.shards[0]
	if err := s.Commit(ctx, &model.Execution{ID: "e2", Version: 1}, emit("e2 again")); err != nil {
		t.Fatal(err)
	}
	if out, err = s.PendingOutbox(ctx); err != nil || len(out) != 4 || out[3].Seq != 2*seqShardBlock+1 {
		t.Fatalf("pending outbox %+v (%v): want e2's second entry at %d", out, err, 2*seqShardBlock+1)
	}
}
