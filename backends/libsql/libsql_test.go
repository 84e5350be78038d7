//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/storetest"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// shared is the one database every test and benchmark of this package uses,
// reset before each use: go-libsql has crashed processes that open many
// short-lived databases.
var shared *sqlstore.Store

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "libsql-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	shared, err = Open(context.Background(), filepath.Join(dir, "store.db"), model.DefaultConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer shared.Close()
	return m.Run()
}

func TestConcurrentCommits(t *testing.T) {
	// Eight writers on one execution: with go-libsql's default (no busy
	// timeout) most of them fail with "database is locked"; here every loser
	// must get a StoreConflict.
	storetest.ConcurrentCommits(t, shared, 8)
}

func TestMatchesReference(t *testing.T) {
	storetest.MatchesReference(t, shared)
	storetest.MatchesReference(t, shared)
}

func TestTimestampText(t *testing.T) {
	storetest.TimestampText(t, shared)
}

// TestDriverTurnsTextIntoTime pins the quirk the CAST(… AS BLOB) columns
// exist for; if go-libsql stops doing it, the casts can go.
func TestDriverTurnsTextIntoTime(t *testing.T) {
	var plain, blob any
	err := shared.DB().QueryRowContext(context.Background(),
		"SELECT '2024-01-02 03:04:05', CAST('2024-01-02 03:04:05' AS BLOB)").Scan(&plain, &blob)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.(string); ok {
		t.Logf("go-libsql now returns timestamp-looking TEXT as a string")
	}
	if b, ok := blob.([]byte); !ok || string(b) != "2024-01-02 03:04:05" {
		t.Errorf("CAST AS BLOB gave %T %v", blob, blob)
	}
}

// TestPragmasOnEveryConnection holds every pooled connection at once and
// checks each has the busy timeout, WAL and synchronous NORMAL.
func TestPragmasOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	var conns []*sql.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range dbfile.Defaults().MaxConns {
		c, err := shared.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var busy, sync int64
		var mode string
		for _, q := range []struct {
			sql string
			dst any
		}{{"PRAGMA busy_timeout", &busy}, {"PRAGMA journal_mode", &mode}, {"PRAGMA synchronous", &sync}} {
			if err := c.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
		if busy != 10000 || mode != "wal" || sync != 1 {
			t.Errorf("connection %d: busy_timeout=%d journal_mode=%s synchronous=%d, want 10000 wal 1", i, busy, mode, sync)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		path string
		opts []Option
		want string
	}{
		{"", nil, "empty database path"},
		{filepath.Join(dir, "no", "x.db"), nil, "does not exist"},
		{dir, nil, "is a directory"},
		{filepath.Join(dir, "x.db"), []Option{WithMode(Mode(7))}, "not supported"},
		{filepath.Join(dir, "x.db"), []Option{WithBusyTimeout(-1)}, "busy timeout"},
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
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed opens left files: %v", entries)
	}
}

func BenchmarkCommit(b *testing.B) { storetest.BenchCommit(b, shared) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, shared) }
