package stmtcache

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "modernc.org/sqlite"
)

// oneConn opens a cached in-memory database and one connection of it.
func oneConn(t *testing.T) *sql.Conn {
	t.Helper()
	db, err := OpenDB("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.ExecContext(context.Background(), "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	return c
}

// cached is the connection's cache entry for query (nil when none).
func cached(t *testing.T, c *sql.Conn, query string) (e *entry, n int) {
	t.Helper()
	if err := c.Raw(func(dc any) error {
		cc := dc.(*conn)
		e, n = cc.stmts[query], len(cc.stmts)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return e, n
}

func TestAStatementIsPreparedOncePerConnection(t *testing.T) {
	ctx := context.Background()
	c := oneConn(t)
	const ins = "INSERT INTO t (k, v) VALUES (?, ?)"
	var first *entry
	for k := range 5 {
		if _, err := c.ExecContext(ctx, ins, k, fmt.Sprint("v", k)); err != nil {
			t.Fatal(err)
		}
		e, _ := cached(t, c, ins)
		if e == nil {
			t.Fatalf("insert %d: the statement is not cached", k)
		}
		if first == nil {
			first = e
		} else if e != first {
			t.Fatalf("insert %d: the statement was prepared again", k)
		}
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 5 {
		t.Fatalf("rows %d, %v; want the 5 inserted through one statement", n, err)
	}
}

// TestABusyStatementIsNotReused: while rows of a query are open, the same
// query on the same connection runs on a statement of its own, and both
// read what they should.
func TestABusyStatementIsNotReused(t *testing.T) {
	ctx := context.Background()
	c := oneConn(t)
	for k := range 3 {
		if _, err := c.ExecContext(ctx, "INSERT INTO t (k, v) VALUES (?, ?)", k, fmt.Sprint("v", k)); err != nil {
			t.Fatal(err)
		}
	}
	const sel = "SELECT v FROM t WHERE k >= ? ORDER BY k"
	outer, err := c.QueryContext(ctx, sel, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		var inner string
		if err := c.QueryRowContext(ctx, sel, 2).Scan(&inner); err != nil || inner != "v2" {
			t.Fatalf("the same query inside the first one's rows: %q, %v", inner, err)
		}
		got = append(got, v)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[v0 v1 v2]" {
		t.Errorf("outer rows %v", got)
	}
	if e, _ := cached(t, c, sel); e == nil || e.busy {
		t.Errorf("after its rows closed the cached statement is %+v; want it cached and free", e)
	}
}

func TestTheCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	c := oneConn(t)
	for i := range MaxStatements + 5 {
		var n int
		if err := c.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	if _, n := cached(t, c, ""); n != MaxStatements {
		t.Errorf("%d statements cached; bound %d", n, MaxStatements)
	}
}
