package scenarios

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// nodeLoad is a node read of exec in history form.
func nodeLoad(node, exec string, call int64, version int64, ok bool) linearizability.Operation {
	op := linearizability.Operation{Kind: linearizability.KindLoad, Execution: exec, Replica: "node " + node, Call: call, Return: call + 1}
	if !ok {
		op.Output.Outcome = linearizability.OutcomeFailed
		return op
	}
	op.Output = linearizability.Output{Outcome: linearizability.OutcomeOK, Exists: version > 0, Version: version}
	return op
}

// TestNodeReadRegressionsCountOnlyAcrossLives: a node that shows less in a
// later process life than in an earlier one is counted; going up, the same
// life, another node or another execution is not.
func TestNodeReadRegressionsCountOnlyAcrossLives(t *testing.T) {
	h := linearizability.History{Ops: []linearizability.Operation{
		nodeLoad("n1#0", "e0", 1e9, 5, true),
		nodeLoad("n1#0", "e1", 1.1e9, 9, true),
		nodeLoad("n2#0", "e0", 1.2e9, 2, true),
		nodeLoad("n1#1", "e0", 2e9, 0, false), // down: failed, not a regression
		nodeLoad("n1#1", "e0", 3e9, 3, true),  // back, older: counted
		nodeLoad("n1#1", "e0", 3.5e9, 6, true),
		nodeLoad("n1#1", "e1", 4e9, 9, true),
		nodeLoad("n2#0", "e0", 4.5e9, 1, true), // same life going back: the replica rules' business, not counted here
	}}
	c := countNodeReads(h)
	if c.Reads != 8 || c.Answered != 7 || c.Regressions != 1 {
		t.Fatalf("counts %+v; want 8 reads, 7 answered, 1 regression", c)
	}
	if !strings.Contains(c.FirstRegression, "n1#1") || !strings.Contains(c.FirstRegression, "version 3") || !strings.Contains(c.FirstRegression, "the 5 it showed") {
		t.Errorf("first regression %q", c.FirstRegression)
	}
}

// TestLivesEndOnKillAndStop: a node's life ends when a kill or stop of it
// succeeds, not when one fails, and a pause ends nothing.
func TestLivesEndOnKillAndStop(t *testing.T) {
	ctx := context.Background()
	l := countLives(fakeCluster{})
	if err := l.Kill(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	_ = l.Stop(ctx, "n1")
	_ = l.Pause(ctx, "n1")
	if err := l.Kill(ctx, "bad"); err == nil {
		t.Fatal("the fake refused nothing")
	}
	if got := [3]int{l.of("n1"), l.of("n2"), l.of("bad")}; got != [3]int{2, 0, 0} {
		t.Errorf("lives %v; want n1 in its third life, the others in their first", got)
	}
	if nodeName("n1", l.of("n1")) != "node n1#2" {
		t.Errorf("name %q", nodeName("n1", 2))
	}
}

// fakeCluster accepts every call but those on node "bad".
type fakeCluster struct{ cluster.Cluster }

func (fakeCluster) Kill(_ context.Context, id string) error  { return refuse(id) }
func (fakeCluster) Stop(_ context.Context, id string) error  { return refuse(id) }
func (fakeCluster) Pause(_ context.Context, id string) error { return refuse(id) }

func refuse(id string) error {
	if id == "bad" {
		return cluster.ErrUnknownNode
	}
	return nil
}

// overlapCounter is a store whose loads take a moment and count how many
// ran at once.
type overlapCounter struct {
	model.Store
	mu           sync.Mutex
	now, most, n int
}

func (s *overlapCounter) Load(ctx context.Context, id string) (*model.Execution, error) {
	s.mu.Lock()
	s.now++
	s.n++
	s.most = max(s.most, s.now)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	defer func() { s.mu.Lock(); s.now--; s.mu.Unlock() }()
	return s.Store.Load(ctx, id)
}

// TestNodeReadsOverlap: each tick sends nodeReadsAtOnce reads of the node
// together (a node that goes back only when reads overlap is caught only
// so), then reads its outbox, all recorded under the node's name in its
// life.
func TestNodeReadsOverlap(t *testing.T) {
	store := &overlapCounter{Store: model.NewReference(model.DefaultConfig())}
	rec := linearizability.NewRecorder(store)
	newClient := func(s model.Store, name string) *linearizability.Client {
		return rec.NewClient(linearizability.ClientOptions{Store: s, Replica: name})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*nodeReadEvery+nodeReadEvery/2)
	defer cancel()
	readNode(ctx, store, "n1", &lives{n: map[string]int{}}, []string{"e0", "e1"}, rand.New(rand.NewPCG(1, 1)), newClient)
	if store.most != nodeReadsAtOnce || store.n < 3*nodeReadsAtOnce {
		t.Errorf("%d loads, at most %d at once; want at least %d, %d at once", store.n, store.most, 3*nodeReadsAtOnce, nodeReadsAtOnce)
	}
	outbox := 0
	for _, op := range rec.History().Ops {
		if op.Replica != "node n1#0" {
			t.Errorf("a node read recorded as %q, want \"node n1#0\"", op.Replica)
		}
		if op.Kind == linearizability.KindPendingOutbox {
			outbox++
		}
	}
	// Each tick reads the outbox too, after a load on the same client, so
	// that the prefix rules can hold the node's tables together.
	if outbox < 3 {
		t.Errorf("%d outbox reads of the node; want one a tick", outbox)
	}
}
