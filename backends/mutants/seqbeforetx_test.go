package mutants

import (
	"context"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// seq-before-tx's bug, drawn without a race: e1's commit fetches seq 1 and
// its fetch is slow; meanwhile e2's commit fetches seq 2, commits and
// returns; then e1's commit takes effect. The queue lists e1's entry, written
// after e2's commit returned, first.
func TestSeqBeforeTxListsALaterCommitFirst(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, "seq-before-tx", model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := st.(*seqBeforeTx)
	emit := func(name string) model.Batch {
		return model.Batch{Emits: []model.Emit{{Event: model.Event{ID: name, Name: name}}}}
	}
	fetched, resume := make(chan struct{}), make(chan struct{})
	s.wait = func(context.Context) error { close(fetched); <-resume; return nil }
	s.fetches.Store(seqFetchSlowEvery - 1) // the next fetch is slow
	done := make(chan error, 1)
	go func() { done <- s.Commit(ctx, &model.Execution{ID: "e1"}, emit("later")) }()
	<-fetched
	if err := s.Commit(ctx, &model.Execution{ID: "e2"}, emit("earlier")); err != nil {
		t.Fatal(err)
	}
	close(resume)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out, err := s.PendingOutbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Event.Name != "later" || out[0].Seq != 1 || out[1].Seq != 2 {
		t.Fatalf("pending outbox %+v: want the later commit's entry at seq 1, before the earlier one's at 2", out)
	}
}
