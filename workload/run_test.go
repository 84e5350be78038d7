package workload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// logResult writes a run's summary to the test log.
func logResult(t *testing.T, res *Result) {
	t.Helper()
	for _, l := range res.Summary() {
		t.Log(l)
	}
}

// TestReferencePasses runs the concurrent scenario against the reference
// model, with high contention and a small trace ring, for several seeds.
func TestReferencePasses(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		ref := model.NewReference(model.DefaultConfig())
		res, err := Run(context.Background(), ref, Config{Clients: 6, Executions: 2, Ops: 1500, Seed: seed, TraceMax: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != linearizability.Ok {
			logResult(t, res)
			t.Fatalf("seed %d: verdict %s: %v", seed, res.Verdict, res.Err)
		}
		if seed == 1 {
			logResult(t, res)
		}
		if res.Counts.Conflicts == 0 || res.Steps != 1500 {
			t.Errorf("seed %d: %d conflicts in %d steps; want contention and every step run", seed, res.Counts.Conflicts, res.Steps)
		}
		for _, k := range linearizability.Kinds() {
			if res.Counts.ByKind[k][linearizability.OutcomeOK] == 0 {
				t.Errorf("seed %d: no successful %s", seed, k)
			}
		}
	}
}

// TestRunStopsAtDuration bounds a run by time alone.
func TestRunStopsAtDuration(t *testing.T) {
	start := time.Now()
	res, err := Run(context.Background(), model.NewReference(model.DefaultConfig()), Config{Clients: 3, Duration: 200 * time.Millisecond, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Ok || res.Steps == 0 || time.Since(start) > 20*time.Second {
		t.Fatalf("verdict %s after %d steps in %v", res.Verdict, res.Steps, time.Since(start))
	}
}

func TestRunRejectsBadConfigAndDirtyStore(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []Config{{Clients: -1}, {Ops: -5}, {Mix: Mix{Load: -1}}, {Duration: 2 * MaxDuration}} {
		if _, err := Run(ctx, model.NewReference(model.DefaultConfig()), cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	ref := model.NewReference(model.DefaultConfig())
	if err := ref.Save(ctx, &model.Execution{ID: "e0", DefinitionID: "d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, ref, Config{Ops: 10}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a store holding e0 was accepted: %v", err)
	}
}

// leakyStore is the reference model except that a commit that loses its CAS
// still writes its emits to the outbox (through a throw-away execution), as
// a store whose side-writes are not guarded by the CAS would.
type leakyStore struct {
	*model.Reference
	leaks int
}

func (s *leakyStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	err := s.Reference.Commit(ctx, exe, b)
	if _, lost := model.AsConflict(err); lost && len(b.Emits) > 0 {
		s.leaks++
		shadow := &model.Execution{ID: "leak-" + exe.ID + "-" + time.Now().String(), DefinitionID: "leak"}
		if lerr := s.Reference.Commit(ctx, shadow, model.Batch{Emits: b.Emits}); lerr != nil {
			return lerr
		}
	}
	return err
}

// TestLeakyStoreIsCaught: the global atomicity check catches a losing
// writer's outbox entry, and the run leaves its artifacts behind.
func TestLeakyStoreIsCaught(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	st := &leakyStore{Reference: model.NewReference(model.DefaultConfig())}
	res, err := Run(context.Background(), st, Config{Clients: 6, Executions: 2, Ops: 600, Seed: 3, OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if st.leaks == 0 {
		t.Fatal("the run never lost a CAS with emits; nothing leaked")
	}
	if res.Verdict != linearizability.Illegal || !errors.Is(res.Err, linearizability.ErrAtomicity) {
		logResult(t, res)
		t.Fatalf("verdict %s, guarantee %q; want Illegal naming atomicity", res.Verdict, res.Guarantee)
	}
	if !strings.Contains(res.Err.Error(), "lost its CAS (conflict) but its outbox entry") {
		t.Errorf("violation does not say what leaked: %v", res.Err)
	}
	for _, name := range []string{evidence.HistoryFile, evidence.ViolationsFile, evidence.VisualizationFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("artifact %s: %v", name, err)
		}
	}
	// The saved history re-checks offline to the same verdict.
	rep, err := linearizability.CheckFile(context.Background(), filepath.Join(dir, evidence.HistoryFile), linearizability.Options{})
	if err != nil || rep.Verdict != linearizability.Illegal || !errors.Is(rep.Err, linearizability.ErrAtomicity) {
		t.Fatalf("offline re-check: %v, %v", err, rep)
	}
}

// The plan is a pure function of the seed: two runs with one seed take the
// same number of steps with the same digest, whatever the interleaving;
// another seed plans otherwise.
func TestPlanIsAPureFunctionOfTheSeed(t *testing.T) {
	cfg := Config{Clients: 4, Executions: 2, Ops: 300, Seed: 5}
	a, b := runMemory(t, cfg), runMemory(t, cfg)
	if a.PlanDigest == "" || a.PlanDigest != b.PlanDigest || a.Steps != 300 || b.Steps != 300 {
		t.Errorf("same seed: digests %s %s, steps %d %d", a.PlanDigest, b.PlanDigest, a.Steps, b.Steps)
	}
	cfg.Seed = 6
	if c := PlanDigest(cfg); c == a.PlanDigest {
		t.Errorf("seeds 5 and 6 plan alike: %s", c)
	}
	if PlanDigest(Config{Clients: 4, Executions: 2, Ops: 300, Seed: 5}) != a.PlanDigest {
		t.Errorf("PlanDigest differs from the run's")
	}
}

func runMemory(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), model.NewReference(model.DefaultConfig()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// deadAfterTraffic serves the traffic, answers one load with "no such
// execution" although it was created long before (a planted stale read),
// and stops serving altogether once the traffic is over.
type deadAfterTraffic struct {
	model.Store
	loads   atomic.Int64
	dead    atomic.Bool
	planted atomic.Bool
}

var errDown = errors.New("the store is down")

func (s *deadAfterTraffic) Load(ctx context.Context, id string) (*model.Execution, error) {
	if s.dead.Load() {
		return nil, errDown
	}
	exe, err := s.Store.Load(ctx, id)
	if exe != nil && exe.Version > 3 && s.loads.Add(1) > 20 && s.planted.CompareAndSwap(false, true) {
		return nil, nil
	}
	return exe, err
}

func (s *deadAfterTraffic) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	if s.dead.Load() {
		return nil, errDown
	}
	return s.Store.PendingOutbox(ctx)
}

// TestNotRecoveredIsAFindingAndTheHistoryIsStillChecked: a store that
// stops serving after the traffic is a finding (NotRecovered), and the
// history recorded up to then is still checked: the stale read planted in
// it is reported too.
func TestNotRecoveredIsAFindingAndTheHistoryIsStillChecked(t *testing.T) {
	s := &deadAfterTraffic{Store: model.NewReference(model.DefaultConfig())}
	cfg := Config{Clients: 4, Executions: 2, Ops: 600, Seed: 3, RecoveryBound: 2 * time.Second, During: func(ctx context.Context, _ func() int64) error {
		<-ctx.Done() // the traffic is over
		s.dead.Store(true)
		return nil
	}}
	res, err := Run(context.Background(), s, cfg)
	if err != nil {
		t.Fatalf("a store that does not recover is a finding, not an error: %v", err)
	}
	if !errors.Is(res.NotRecovered, linearizability.ErrNotRecovered) {
		t.Errorf("NotRecovered %v", res.NotRecovered)
	}
	if !s.planted.Load() {
		t.Fatal("the stale read was never planted")
	}
	if res.Verdict != linearizability.Illegal {
		t.Errorf("the planted stale read was not found: verdict %s, %v", res.Verdict, res.Report.Violations)
	}
}
