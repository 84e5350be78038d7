package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/storecheck/storecheck/backends/internal/storetest"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// open opens a store on a new file in a test directory, closed at cleanup.
func open(t testing.TB, opts ...Option) *sqlstore.Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "store.db"), model.DefaultConfig(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openMemory(t testing.TB) *sqlstore.Store {
	t.Helper()
	s, err := Open(context.Background(), ":memory:", model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConcurrentCommitsFile(t *testing.T) {
	storetest.ConcurrentCommits(t, open(t), 8)
}

func TestConcurrentCommitsMemory(t *testing.T) {
	storetest.ConcurrentCommits(t, openMemory(t), 8)
}

func TestMatchesReference(t *testing.T) {
	s := open(t)
	storetest.MatchesReference(t, s)
	// A second run on the same, reset, store must give the same seqs.
	storetest.MatchesReference(t, s)
}

func TestMatchesReferenceMemory(t *testing.T) {
	storetest.MatchesReference(t, openMemory(t))
}

func TestTimestampText(t *testing.T) {
	storetest.TimestampText(t, open(t))
}

// TestPragmasOnEveryConnection holds several connections at once and checks
// each has the busy timeout, WAL and the chosen synchronous level.
func TestPragmasOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	s := open(t, WithSynchronous("FULL"), WithBusyTimeout(1234e6))
	var conns []interface{ Close() error }
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 4 {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var busy, sync int
		var mode string
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if busy != 1234 || mode != "wal" || sync != 2 {
			t.Errorf("connection %d: busy_timeout=%d journal_mode=%s synchronous=%d, want 1234 wal 2", i, busy, mode, sync)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "dir", "x.db")
	cases := []struct {
		path string
		opts []Option
		want string
	}{
		{"", nil, "empty database path"},
		{missing, nil, "does not exist"},
		{dir, nil, "is a directory"},
		{filepath.Join(dir, "x.db"), []Option{WithSynchronous("sometimes")}, "synchronous must be"},
		{filepath.Join(dir, "y.db"), []Option{WithMaxConns(0)}, "max connections"},
	}
	for _, c := range cases {
		s, err := Open(ctx, c.path, model.DefaultConfig(), c.opts...)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error containing %q", c.path, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) = %q, want one line containing %q", c.path, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); !os.IsNotExist(err) {
		t.Errorf("a failed open created %s", filepath.Join(dir, "no"))
	}
}

// TestDurableAcrossReopen checks that a commit is there after closing and
// reopening the file.
func TestDurableAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := Open(ctx, path, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, &model.Execution{ID: "a", Status: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Load(ctx, "a")
	if err != nil || got == nil || got.Version != 1 {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
}

// TestCancelledContextLeavesVersion checks that a commit whose context is
// already cancelled fails, leaves exe.Version alone, and leaves no
// transaction open on the pooled connection.
func TestCancelledContextLeavesVersion(t *testing.T) {
	s := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	exe := &model.Execution{ID: "a"}
	if err := s.Save(ctx, exe); !errors.Is(err, model.ErrNotApplied) || exe.Version != 0 {
		t.Fatalf("save with a cancelled context: %v, version %d; want not applied at 0", err, exe.Version)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			e := &model.Execution{ID: "a"}
			if err := s.Save(context.Background(), e); err != nil && !isConflict(err) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func isConflict(err error) bool {
	_, ok := model.AsConflict(err)
	return ok
}

func BenchmarkCommit(b *testing.B) { storetest.BenchCommit(b, open(b)) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, open(b)) }

func BenchmarkCommitMemory(b *testing.B) { storetest.BenchCommit(b, openMemory(b)) }

// TestWithoutAutoCheckpoint: every connection of a store opened without
// automatic checkpoints has wal_autocheckpoint 0; a default store keeps
// SQLite's 1000 pages.
func TestWithoutAutoCheckpoint(t *testing.T) {
	ctx := context.Background()
	pages := func(s *sqlstore.Store) []int {
		var got []int
		var conns []*sql.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range 3 {
			c, err := s.DB().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			var n int
			if err := c.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&n); err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		return got
	}
	for _, n := range pages(open(t, WithoutAutoCheckpoint())) {
		if n != 0 {
			t.Errorf("without automatic checkpoints: wal_autocheckpoint=%d on a connection, want 0", n)
		}
	}
	for _, n := range pages(open(t)) {
		if n != 1000 {
			t.Errorf("by default: wal_autocheckpoint=%d on a connection, want SQLite's 1000", n)
		}
	}
}
