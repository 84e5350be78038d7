package lagsim

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// TestRefreshIsOneSnapshot refreshes a replica while writers commit on the
// primary, each commit bumping the execution and emitting one event in one
// transaction. Every refreshed replica must hold as many outbox rows as
// the execution's version: a mix of two snapshots would not.
func TestRefreshIsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	primary, replica, source := primaryAndReplica(t)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() { commitLoop(ctx, t, primary, w, stop) })
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	checked := 0
	for ; time.Now().Before(deadline) && checked < 300; checked++ {
		if err := refresh(ctx, replica.DB(), source); err != nil {
			t.Fatal(err)
		}
		d, err := replica.Dump(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var version int64
		for _, e := range d.Executions {
			version = e.Version
		}
		if int64(len(d.Outbox)) != version {
			t.Fatalf("refresh %d: version %d but %d outbox rows: the replica mixes two snapshots", checked, version, len(d.Outbox))
		}
	}
	close(stop)
	wg.Wait()
	if checked < 5 {
		t.Fatalf("only %d refreshes checked", checked)
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

// BenchmarkRefresh copies a primary of about 50 pages (the size of the
// lag sweep's primary) into a replica, one commit on the primary between
// refreshes, as the sweep's syncs do, and reads one execution from the
// replica after each (the first read after a refresh parses the schema
// again).
func BenchmarkRefresh(b *testing.B) {
	ctx := context.Background()
	primary, replica, source := primaryAndReplica(b)
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
		if err := refresh(ctx, replica.DB(), source); err != nil {
			b.Fatal(err)
		}
		if _, err := replica.Load(ctx, "e1"); err != nil {
			b.Fatal(err)
		}
	}
}

// primaryAndReplica opens a primary in a folder of the test's, an
// in-memory replica and the refreshes' source connections, all closed when
// the test ends.
func primaryAndReplica(tb testing.TB) (primary, replica *sqlstore.Store, source *sql.DB) {
	tb.Helper()
	ctx := context.Background()
	primaryPath := filepath.Join(tb.TempDir(), "primary.db")
	primary, err := sqlite.Open(ctx, primaryPath, model.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { primary.Close() })
	replica, err = sqlite.Open(ctx, dbfile.Memory, model.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { replica.Close() })
	if source, err = openSource(primaryPath); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { source.Close() })
	return primary, replica, source
}
