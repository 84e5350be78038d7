package conformance_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// blindWrite skips the version check: it commits from whatever version is
// stored, so a stale writer silently overwrites (a lost update).
type blindWrite struct{ *model.Reference }

func (b blindWrite) Commit(ctx context.Context, exe *model.Execution, batch model.Batch) error {
	cur, err := b.Reference.Load(ctx, exe.ID)
	if err != nil {
		return err
	}
	exe.Version = 0
	if cur != nil {
		exe.Version = cur.Version
	}
	return b.Reference.Commit(ctx, exe, batch)
}

func (b blindWrite) Save(ctx context.Context, exe *model.Execution) error {
	return b.Commit(ctx, exe, model.Batch{})
}

// dropOutbox forgets the commit's emits: a Finished event is never delivered.
type dropOutbox struct{ *model.Reference }

func (d dropOutbox) Commit(ctx context.Context, exe *model.Execution, batch model.Batch) error {
	batch.Emits = nil
	return d.Reference.Commit(ctx, exe, batch)
}

func TestSuiteCatchesBrokenStores(t *testing.T) {
	cases := []struct {
		name string
		open conformance.Opener
		want string // what the failure must mention
	}{
		{"skips the version check", func(_ context.Context, cfg model.Config) (model.Store, error) {
			return blindWrite{model.NewReference(cfg)}, nil
		}, "lost update"},
		{"drops the outbox write", func(_ context.Context, cfg model.Config) (model.Store, error) {
			return dropOutbox{model.NewReference(cfg)}, nil
		}, "outbox"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := conformance.Check(context.Background(), c.open, conformance.CheckConfig{Seed: 7, Checks: 100, ShrinkTime: 10 * time.Second})
			if err != nil {
				t.Fatalf("harness: %v", err)
			}
			if rep.Passed {
				t.Fatalf("the suite passed a broken store (%d cases, %d ops)", rep.Cases, rep.Ops)
			}
			if !strings.Contains(rep.Failure, c.want) && !strings.Contains(strings.Join(rep.MinimalSteps, "\n"), c.want) {
				t.Errorf("failure does not mention %q:\n%s\n%s", c.want, rep.Failure, strings.Join(rep.MinimalSteps, "\n"))
			}
			n := conformance.StepCount(rep.MinimalSteps)
			if n == 0 || n > 4 {
				t.Errorf("minimal sequence has %d steps, want 1..4 (shrinking failed?):\n%s", n, strings.Join(rep.MinimalSteps, "\n"))
			}
			t.Logf("caught: %s\nminimal sequence (%d steps):\n%s", rep.Failure, n, strings.Join(rep.MinimalSteps, "\n"))
		})
	}
}

// The same seed must give the same sequences: a failure found once can be
// replayed from the seed the report prints.
func TestCheckIsReproducibleFromSeed(t *testing.T) {
	open := func(_ context.Context, cfg model.Config) (model.Store, error) {
		return blindWrite{model.NewReference(cfg)}, nil
	}
	run := func(seed uint64) conformance.Report {
		rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: seed, Checks: 20})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	a, b := run(11), run(11)
	if strings.Join(a.Output, "\n") != strings.Join(b.Output, "\n") {
		t.Fatalf("two runs with seed 11 differ")
	}
	good := func(_ context.Context, cfg model.Config) (model.Store, error) { return model.NewReference(cfg), nil }
	ops := func(seed uint64) int64 {
		rep, err := conformance.Check(context.Background(), good, conformance.CheckConfig{Seed: seed, Checks: 20})
		if err != nil || !rep.Passed {
			t.Fatalf("reference failed its own property: %v %s", err, rep.Failure)
		}
		return rep.Ops
	}
	if x, y, z := ops(3), ops(3), ops(4); x != y || x == z {
		t.Fatalf("operation counts: seed 3 gave %d then %d, seed 4 gave %d; want equal for equal seeds", x, y, z)
	}
}

// slowAfter is blindWrite that takes its time on every commit: a store on a
// loaded machine.
type slowAfter struct {
	blindWrite
	delay time.Duration
}

func (s slowAfter) Commit(ctx context.Context, exe *model.Execution, batch model.Batch) error {
	time.Sleep(s.delay)
	return s.blindWrite.Commit(ctx, exe, batch)
}

func (s slowAfter) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Shrinking is bounded by the cases it re-runs, not by the clock: a store
// ten times slower (a loaded machine) shrinks the same seed to the same
// sequence, although its shrinking takes longer than the fast one's whole
// wall-clock budget would have allowed.
func TestShrinkingIsBoundedByRunsNotTime(t *testing.T) {
	run := func(delay time.Duration) conformance.Report {
		open := func(_ context.Context, cfg model.Config) (model.Store, error) {
			return slowAfter{blindWrite{model.NewReference(cfg)}, delay}, nil
		}
		rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: 11, Checks: 100, ShrinkRuns: 150})
		if err != nil || rep.Passed {
			t.Fatalf("want a failure: %v, passed=%v", err, rep.Passed)
		}
		return rep
	}
	start := time.Now()
	fast := run(0)
	fastTime := time.Since(start)
	start = time.Now()
	slow := run(200 * time.Microsecond)
	slowTime := time.Since(start)
	if strings.Join(fast.MinimalSteps, "\n") != strings.Join(slow.MinimalSteps, "\n") {
		t.Errorf("the same seed shrank to different sequences:\nfast (%v):\n%s\nslow (%v):\n%s", fastTime,
			strings.Join(fast.MinimalSteps, "\n"), slowTime, strings.Join(slow.MinimalSteps, "\n"))
	}
	if fast.Cases != slow.Cases {
		t.Errorf("cases run: %d fast, %d slow", fast.Cases, slow.Cases)
	}
	t.Logf("fast %v, slow %v, %d cases, %d steps", fastTime, slowTime, fast.Cases, conformance.StepCount(fast.MinimalSteps))
}

// staleLoad answers every load with the first version it stored, and has
// no Dump: its tables are read through its reads.
type staleLoad struct {
	model.Store
	mu    *sync.Mutex
	first map[string]*model.Execution
}

func (s staleLoad) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if err := s.Store.Commit(ctx, exe, b); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first[exe.ID] == nil {
		s.first[exe.ID] = exe.Clone()
	}
	return nil
}

func (s staleLoad) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

func (s staleLoad) Load(ctx context.Context, id string) (*model.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.first[id]; e != nil {
		return e.Clone(), nil
	}
	return s.Store.Load(ctx, id)
}

// A difference in the tables of a store without Dump is named as a
// difference in what its reads return: the report of a stale load must
// point at load, not at a write the store never got wrong.
func TestTablesWithoutDumpNameTheReads(t *testing.T) {
	open := func(_ context.Context, cfg model.Config) (model.Store, error) {
		return staleLoad{model.NewReference(cfg), &sync.Mutex{}, map[string]*model.Execution{}}, nil
	}
	rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: 7, Checks: 100, ShrinkTime: 10 * time.Second})
	if err != nil || rep.Passed {
		t.Fatalf("want a failure: %v, passed=%v", err, rep.Passed)
	}
	if !strings.Contains(rep.Failure, "read through load") {
		t.Errorf("failure does not say the tables were read through load:\n%s", rep.Failure)
	}
}
