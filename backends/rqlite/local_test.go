package rqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/backends/internal/storetest"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"

	_ "modernc.org/sqlite" // the local stand-in for rqlite's SQLite
)

// localExecutor behaves like one rqlite node for the protocol's purposes,
// over a local SQLite file (modernc): Execute runs the list as ONE
// transaction and, like rqlite, answers a failing statement inside its
// result after rolling everything back; parameters and values go through
// JSON as they do on rqlite's wire (integral numbers bound as integers,
// every number read back as float64). It checks the SQL logic of the
// store, not rqlite.
type localExecutor struct {
	db *sql.DB
}

func newLocalExecutor(t testing.TB) *localExecutor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rqlite-local.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	// One connection: rqlite applies the log one entry at a time.
	db.SetMaxOpenConns(1)
	return &localExecutor{db: db}
}

func (l *localExecutor) Close() error { return l.db.Close() }

func (l *localExecutor) Execute(ctx context.Context, stmts []Statement) ([]Result, error) {
	return l.inTx(ctx, stmts, func(c *sql.Conn, s Statement, args []any) (Result, error) {
		res, err := c.ExecContext(ctx, s.SQL, args...)
		if err != nil {
			return Result{}, err
		}
		n, err := res.RowsAffected()
		return Result{RowsAffected: n}, err
	})
}

func (l *localExecutor) Query(ctx context.Context, _ Level, stmts []Statement) ([]Result, error) {
	return l.inTx(ctx, stmts, func(c *sql.Conn, s Statement, args []any) (Result, error) {
		rows, err := c.QueryContext(ctx, s.SQL, args...)
		if err != nil {
			return Result{}, err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return Result{}, err
		}
		r := Result{Columns: cols}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return Result{}, err
			}
			row, err := throughJSON(vals)
			if err != nil {
				return Result{}, err
			}
			r.Rows = append(r.Rows, row)
		}
		return r, rows.Err()
	})
}

// inTx runs each statement in one transaction; a statement error rolls it
// back and ends the list, answered in the failing statement's result.
func (l *localExecutor) inTx(ctx context.Context, stmts []Statement, run func(*sql.Conn, Statement, []any) (Result, error)) ([]Result, error) {
	c, err := l.db.Conn(ctx)
	if err != nil {
		return nil, notApplied(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, notApplied(err)
	}
	var out []Result
	for _, s := range stmts {
		args, err := wireArgs(s.Args)
		if err == nil {
			var r Result
			if r, err = run(c, s, args); err == nil {
				out = append(out, r)
				continue
			}
		}
		out = append(out, Result{Err: err})
		if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			return nil, fmt.Errorf("rollback: %w", rerr)
		}
		return out, nil
	}
	if _, err := c.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		return nil, err
	}
	return out, nil
}

// wireArgs sends parameters through JSON and decodes them as rqlite does:
// an integral number becomes int64, any other number float64.
func wireArgs(args []any) ([]any, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var vals []any
	if err := dec.Decode(&vals); err != nil {
		return nil, err
	}
	for i, v := range vals {
		if n, ok := v.(json.Number); ok {
			if i64, err := n.Int64(); err == nil {
				vals[i] = i64
			} else if vals[i], err = n.Float64(); err != nil {
				return nil, err
			}
		}
	}
	return vals, nil
}

// throughJSON returns a row as a JSON client decodes it.
func throughJSON(vals []any) ([]any, error) {
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			vals[i] = string(b)
		}
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return nil, err
	}
	var out []any
	return out, json.Unmarshal(b, &out)
}

// openLocal opens a Store over a fresh local executor, with the seed's
// guard.
func openLocal(t testing.TB, cfg model.Config) *Store {
	t.Helper()
	s, err := New(context.Background(), newLocalExecutor(t), LevelStrong, 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformanceLocal runs the whole conformance suite on the store's
// protocol — the statement list as one SQLite transaction, rqlite's answers
// through JSON — without rqlite, with the strict guard. The seed's guard
// differs only for a stale commit byte-identical to the stored row, which
// the random sequences reach now and then (TestSeedGuardLeak pins it).
func TestConformanceLocal(t *testing.T) {
	conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
		s, err := New(ctx, newLocalExecutor(t), LevelStrong, 0, cfg)
		if err == nil {
			s.SetGuard(GuardPreState)
		}
		return s, err
	})
}

// TestConcurrentCommitsLocal: of many writers from one version exactly one
// wins, the others get a conflict naming the winner's version, and no loser
// leaks an outbox entry — with either guard (the writers' data differ).
func TestConcurrentCommitsLocal(t *testing.T) {
	for _, g := range []Guard{GuardData, GuardPreState} {
		t.Run(string(g), func(t *testing.T) {
			s := openLocal(t, model.DefaultConfig())
			defer s.Close()
			s.SetGuard(g)
			storetest.ConcurrentCommits(t, s, 8)
		})
	}
}
