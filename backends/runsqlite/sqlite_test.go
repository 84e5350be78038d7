package runsqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model/runstore"
)

func open(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestSchemaHasTheSeedTables(t *testing.T) {
	s, _ := open(t)
	for _, name := range []string{"schema_migrations", "runs", "run_events", "checkpoints", "interrupts", "run_leases", "runs_one_active_per_session_idx"} {
		var n int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d, %v", name, n, err)
		}
	}
	var mode string
	if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v", mode, err)
	}
}

// Concurrent claims through the pool each get a different run: BEGIN
// IMMEDIATE serialises them.
func TestConcurrentClaimsGetDistinctRuns(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	const n = 12
	for i := range n {
		if _, err := s.CreateRun(ctx, runstore.NewRun{ID: fmt.Sprintf("r%02d", i), TenantID: "t", SessionID: fmt.Sprintf("s%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	got := map[string]int64{}
	var wg sync.WaitGroup
	for w := range n + 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.ClaimNext(ctx, fmt.Sprintf("w%d", w), time.Minute, time.Unix(100, 0))
			if err != nil {
				t.Error(err)
				return
			}
			if c == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if _, dup := got[c.Run.ID]; dup {
				t.Errorf("run %s claimed twice", c.Run.ID)
			}
			got[c.Run.ID] = c.Lease.Token
		}()
	}
	wg.Wait()
	if len(got) != n {
		t.Fatalf("%d runs claimed, want %d", len(got), n)
	}
}

// What a store committed is there after it is closed and opened again.
func TestReopenKeepsEverything(t *testing.T) {
	s, path := open(t)
	ctx := context.Background()
	if _, err := s.CreateRun(ctx, runstore.NewRun{ID: "r", TenantID: "t", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimNext(ctx, "w", time.Minute, time.Unix(100, 0)); err != nil {
		t.Fatal(err)
	}
	before, err := s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	after, err := again.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := runstore.Diff(before, after, 0); len(diff) > 0 || len(after.Leases) != 1 {
		t.Fatalf("after reopening: %v", diff)
	}
}
