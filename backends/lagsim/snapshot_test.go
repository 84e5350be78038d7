package lagsim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// TestReplicaHoldsItsSnapshot: what the primary commits after a refresh is
// not in the replica, to any of its reads (a dump included, which runs in
// a transaction of its own), until the next refresh; then it is.
func TestReplicaHoldsItsSnapshot(t *testing.T) {
	ctx := context.Background()
	primary, replica := primaryAndReplica(t)
	commitOne(ctx, t, primary, "e1", 0)
	if err := replica.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	commitOne(ctx, t, primary, "e1", 1)
	commitOne(ctx, t, primary, "e2", 0)
	for range 2 { // a dump must not end the snapshot either
		if got, err := replica.Load(ctx, "e1"); err != nil || got == nil || got.Version != 1 {
			t.Fatalf("replica's e1 before the refresh: %+v, %v (want version 1, the snapshot's)", got, err)
		}
		if got, err := replica.Load(ctx, "e2"); err != nil || got != nil {
			t.Fatalf("replica's e2 before the refresh: %+v, %v (want none: committed after the snapshot)", got, err)
		}
		d, err := replica.Dump(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Executions) != 1 || len(d.Outbox) != 1 {
			t.Fatalf("replica's dump before the refresh: %d executions, %d outbox rows (want 1 and 1)", len(d.Executions), len(d.Outbox))
		}
	}
	if err := replica.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := replica.Load(ctx, "e1"); err != nil || got == nil || got.Version != 2 {
		t.Fatalf("replica's e1 after the refresh: %+v, %v (want version 2)", got, err)
	}
	if got, err := replica.Load(ctx, "e2"); err != nil || got == nil {
		t.Fatalf("replica's e2 after the refresh: %+v, %v (want it)", got, err)
	}
}

// TestRefreshIsOneSnapshot refreshes a replica while writers commit on the
// primary, each commit bumping the execution and emitting one event in one
// transaction. Every refreshed replica must hold as many outbox rows as
// the execution's version: a mix of two snapshots would not.
func TestRefreshIsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	primary, replica := primaryAndReplica(t)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() { commitLoop(ctx, t, primary, w, stop) })
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	checked := 0
	for ; time.Now().Before(deadline) && checked < 300; checked++ {
		if err := replica.refresh(ctx); err != nil {
			t.Fatal(err)
		}
		exe, err := replica.Load(ctx, "e")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // let the writers commit between the two reads
		outbox, err := replica.PendingOutbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var version int64
		if exe != nil {
			version = exe.Version
		}
		if int64(len(outbox)) != version {
			t.Fatalf("refresh %d: version %d but %d outbox rows: the replica mixes two snapshots", checked, version, len(outbox))
		}
	}
	close(stop)
	wg.Wait()
	if checked < 5 {
		t.Fatalf("only %d refreshes checked", checked)
	}
}

// commitOne commits execution id from version with one emit.
func commitOne(ctx context.Context, t *testing.T, s model.Store, id string, version int64) {
	t.Helper()
	exe := &model.Execution{ID: id, DefinitionID: "d", Status: "running", Version: version}
	ev := model.Event{ID: fmt.Sprintf("%s-%d", id, version), Name: "tick", Data: json.RawMessage(`{}`)}
	if err := s.Commit(ctx, exe, model.Batch{Emits: []model.Emit{{Event: ev}}}); err != nil {
		t.Fatal(err)
	}
}

// commitLoop commits on execution "e" from the version it loads, with one
// emit per commit, until stop.
func commitLoop(ctx context.Context, t *testing.T, s model.Store, w int, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		exe, err := s.Load(ctx, "e")
		if err != nil {
			t.Error(err)
			return
		}
		if exe == nil {
			exe = &model.Execution{ID: "e", DefinitionID: "d", Status: "running"}
		}
		ev := model.Event{ID: fmt.Sprintf("w%d-%d", w, n), Name: "tick", Data: json.RawMessage(`{}`)}
		err = s.Commit(ctx, exe, model.Batch{Emits: []model.Emit{{Event: ev}}})
		if _, ok := model.AsConflict(err); err != nil && !ok {
			t.Error(err)
			return
		}
	}
}

// BenchmarkRefresh refreshes a replica of a primary of about 50 pages (the
// size of the lag sweep's primary), one commit on the primary between
// refreshes, as the sweep's syncs do, and reads one execution from the
// replica after each.
func BenchmarkRefresh(b *testing.B) {
	ctx := context.Background()
	primary, replica := primaryAndReplica(b)
	n := 0
	commit := func() {
		n++
		id := fmt.Sprintf("e%d", n%40)
		exe, err := primary.Load(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if exe == nil {
			exe = &model.Execution{ID: id, DefinitionID: "d", Status: "running"}
		}
		ev := model.Event{ID: fmt.Sprintf("%s-%d", id, n), Name: "tick", Data: json.RawMessage(`{"pad":"` + strings.Repeat("x", 200) + `"}`)}
		if err := primary.Commit(ctx, exe, model.Batch{Emits: []model.Emit{{Event: ev}}}); err != nil {
			b.Fatal(err)
		}
	}
	for range 400 {
		commit()
	}
	for b.Loop() {
		b.StopTimer()
		commit()
		b.StartTimer()
		if err := replica.refresh(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := replica.Load(ctx, "e1"); err != nil {
			b.Fatal(err)
		}
	}
}

// primaryAndReplica opens a primary (with its replication position) in a
// folder of the test's and a replica of it, both closed when the test ends.
func primaryAndReplica(tb testing.TB) (primary *sqlstore.Store, replica *snapshot) {
	tb.Helper()
	ctx := context.Background()
	primaryPath := filepath.Join(tb.TempDir(), "primary.db")
	primary, err := sqlite.Open(ctx, primaryPath, model.DefaultConfig(), sqlite.WithStoreOptions(sqlstore.Options{Statements: primaryStatements()}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { primary.Close() })
	if replica, err = openReplica(ctx, primaryPath, model.DefaultConfig(), "r"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { replica.Close() })
	return primary, replica
}

// TestWALStaysBounded: replicas that hold old snapshots keep the primary's
// WAL from starting over; past the bound the cluster compacts it, moving
// every replica to the primary's current state, unless a fault holds one
// back (a stalled replica), and the WAL then grows past the bound.
func TestWALStaysBounded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	opt := DefaultOptions()
	opt.Lag = MaxLag // no scheduled refresh during the test
	opt.ReadYourWrites = false
	c, err := OpenCluster(ctx, path, model.DefaultConfig(), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const bound = 1 << 20
	c.walBound = bound
	var replicas []*replica.Store
	for i := range 3 {
		r, err := c.NewReplica(ctx, fmt.Sprintf("r%d", i), uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, r)
	}
	pad := strings.Repeat("x", 4000)
	commits := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			exe := &model.Execution{ID: fmt.Sprintf("e%d", i), DefinitionID: "d", Status: "running", Context: json.RawMessage(`{"pad":"` + pad + `"}`)}
			if err := c.Primary().Commit(ctx, exe, model.Batch{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}

	replicas[1].StallSyncs() // held back: no compaction may move it
	commits(0, 1500)
	if c.Compactions() != 0 || walSize() < 2*bound {
		t.Fatalf("with a replica stalled: %d compactions, WAL %d bytes; want none, and the WAL past twice the bound", c.Compactions(), walSize())
	}
	if got, err := replicas[1].Load(ctx, "e0"); err != nil || got != nil {
		t.Fatalf("the stalled replica moved: e0 is %+v, %v", got, err)
	}

	replicas[1].ResumeSyncs()
	before := walSize()
	commits(1500, 1500)
	if c.Compactions() == 0 || walSize() > before {
		t.Fatalf("without a fault: %d compactions, WAL %d bytes (was %d); want some, and no growth", c.Compactions(), walSize(), before)
	}
	for i, r := range replicas {
		if got, err := r.Load(ctx, "e0"); err != nil || got == nil {
			t.Errorf("replica r%d after a compaction: e0 is %+v, %v; want the primary's", i, got, err)
		}
	}
}

// TestPrimaryCheckpointsPassively: the primary leaves SQLite's automatic
// checkpoints off (every commit would try one past 1000 pages, held
// snapshots or not) and the cluster checkpoints at its looks at the WAL
// instead: with no snapshot holding frames, the WAL starts over after each
// and stays a fraction of what the commits wrote.
func TestPrimaryCheckpointsPassively(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	c, err := OpenCluster(ctx, path, model.DefaultConfig(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var pages int
	if err := c.primary.DB().QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != 0 {
		t.Fatalf("the primary's wal_autocheckpoint is %d pages; want 0 (off)", pages)
	}
	pad := strings.Repeat("x", 4000)
	const n = 1500 // about 6 MB of WAL frames, over 1500 pages
	var largest int64
	for i := range n {
		exe := &model.Execution{ID: fmt.Sprintf("e%d", i), DefinitionID: "d", Status: "running", Context: json.RawMessage(`{"pad":"` + pad + `"}`)}
		if err := c.Primary().Commit(ctx, exe, model.Batch{}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	if got := c.Checkpoints(); got < n/walCheckEvery {
		t.Errorf("%d passive checkpoints in %d commits; want one every %d", got, n, walCheckEvery)
	}
	if largest > 2<<20 {
		t.Errorf("the WAL reached %d bytes in %d commits with no snapshot held; want it to start over after each checkpoint (under 2 MiB)", largest, n)
	}
}
