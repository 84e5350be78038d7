package replica

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// fixture is a Store over two reference stores: writes must reach the
// primary, reads the reader; syncs are counted and may be made to fail.
type fixture struct {
	*Store
	primary, reader *model.Reference
	syncs           atomic.Int64
	fail            atomic.Bool
}

func newFixture(t *testing.T, s Schedule, ryw bool) *fixture {
	t.Helper()
	f := &fixture{primary: model.NewReference(model.DefaultConfig()), reader: model.NewReference(model.DefaultConfig())}
	st, err := New(context.Background(), Config{
		Name: "test", Replica: "r0", Primary: f.primary, Reader: f.reader, Schedule: s, ReadYourWrites: ryw,
		Sync: func(context.Context) error {
			if f.fail.Load() {
				return errors.New("primary unreachable")
			}
			f.syncs.Add(1)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.Store = st
	return f
}

func TestRouting(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Schedule{Interval: time.Hour}, false)
	exe := &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}
	if err := f.Commit(ctx, exe, model.Batch{}); err != nil || exe.Version != 1 {
		t.Fatalf("commit: %v, version %d", err, exe.Version)
	}
	if got, _ := f.primary.Load(ctx, "e"); got == nil {
		t.Errorf("the commit did not reach the primary")
	}
	if got, _ := f.Load(ctx, "e"); got != nil {
		t.Errorf("the load did not come from the (empty) reader: %+v", got)
	}
	if n := f.syncs.Load(); n != 1 {
		t.Errorf("%d syncs, want only the first (no read-your-writes, an hour's interval)", n)
	}
}

func TestReadYourWritesAndSyncOnRead(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Schedule{}, true)
	exe := &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}
	if err := f.Commit(ctx, exe, model.Batch{}); err != nil {
		t.Fatal(err)
	}
	if n := f.syncs.Load(); n != 2 {
		t.Errorf("%d syncs after a write with read-your-writes, want 2", n)
	}
	if _, err := f.Load(ctx, "e"); err != nil {
		t.Fatal(err)
	}
	if n := f.syncs.Load(); n != 3 {
		t.Errorf("%d syncs after a read with interval 0, want 3", n)
	}
	f.StallSyncs()
	_, _ = f.Load(ctx, "e")
	if n := f.syncs.Load(); n != 3 {
		t.Errorf("a stalled replica synced before a read")
	}
	f.ResumeSyncs()

	f.fail.Store(true)
	err := f.Commit(ctx, exe, model.Batch{})
	if err == nil || errors.Is(err, model.ErrNotApplied) || exe.Version != 1 {
		t.Errorf("a write whose read-your-writes sync failed: %v, version %d; want an error of unknown outcome and the version kept", err, exe.Version)
	}
	if _, err := f.Load(ctx, "e"); err != nil {
		t.Errorf("a read must go on when the sync before it fails: %v", err)
	}
}

func TestBackgroundSyncs(t *testing.T) {
	f := newFixture(t, Schedule{Interval: 2 * time.Millisecond, Jitter: 0.5, Seed: 1}, false)
	deadline := time.Now().Add(2 * time.Second)
	for f.syncs.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if f.syncs.Load() < 5 {
		t.Fatalf("only %d background syncs", f.syncs.Load())
	}
	f.StallSyncs()
	time.Sleep(20 * time.Millisecond)
	n := f.syncs.Load()
	time.Sleep(20 * time.Millisecond)
	if f.syncs.Load() != n || f.Stats().Skipped == 0 {
		t.Errorf("a stalled replica went on syncing (%d → %d, skipped %d)", n, f.syncs.Load(), f.Stats().Skipped)
	}
}

func TestSchedule(t *testing.T) {
	s := Schedule{Interval: 100 * time.Millisecond, Jitter: 0.5, Seed: 7, Stream: 3}
	a, b := s.Waits(50), s.Waits(50)
	other := Schedule{Interval: 100 * time.Millisecond, Jitter: 0.5, Seed: 7, Stream: 4}.Waits(50)
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("one schedule, two waits at %d: %v %v", i, a[i], b[i])
		}
		if a[i] < 50*time.Millisecond || a[i] > 150*time.Millisecond {
			t.Errorf("wait %v outside [50ms, 150ms]", a[i])
		}
		same = same && a[i] == other[i]
	}
	if same {
		t.Errorf("two streams wait alike")
	}
	if (Schedule{}).Waits(3) != nil {
		t.Errorf("a sync-on-read schedule has waits")
	}
	for _, bad := range []Schedule{{Interval: -1}, {Jitter: 1}, {Jitter: -0.1}} {
		if bad.Check() == nil {
			t.Errorf("%+v passed Check", bad)
		}
	}
}

// resetCounter is a reader told of resets.
type resetCounter struct {
	*model.Reference
	resets int
	syncs  *atomic.Int64
	synced int64 // syncs when it was told
}

func (r *resetCounter) AfterReset(context.Context) error {
	r.resets++
	r.synced = r.syncs.Load()
	return nil
}

// TestResetTellsAResetObserver: a reader that is a ResetObserver is told
// of a reset once the replica has synced to the emptied primary; a write
// is no reset.
func TestResetTellsAResetObserver(t *testing.T) {
	ctx := context.Background()
	var syncs atomic.Int64
	reader := &resetCounter{Reference: model.NewReference(model.DefaultConfig()), syncs: &syncs}
	st, err := New(ctx, Config{
		Name: "test", Replica: "r0", Primary: model.NewReference(model.DefaultConfig()), Reader: reader,
		Schedule: Schedule{Interval: time.Hour}, ReadYourWrites: true,
		Sync: func(context.Context) error { syncs.Add(1); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Commit(ctx, &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}, model.Batch{}); err != nil {
		t.Fatal(err)
	}
	if reader.resets != 0 {
		t.Fatalf("told of %d resets after a commit", reader.resets)
	}
	before := syncs.Load()
	if err := st.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if reader.resets != 1 || reader.synced <= before {
		t.Errorf("told of %d resets, at sync %d (the reset's sync is %d): want one, after the sync", reader.resets, reader.synced, before+1)
	}
}
