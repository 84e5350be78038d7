package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// openBackend opens a fresh store at a temporary file through
// backends.Open, skipping (with the reason) when the backend cannot be built
// here, e.g. libsql: without cgo.
func openBackend(t *testing.T, scheme string) (model.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := backends.Open(context.Background(), scheme+":"+path, model.DefaultConfig())
	if err != nil {
		if strings.Contains(err.Error(), "cgo") {
			t.Skipf("NOT RUN: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, path
}

// TestSQLBackendsPass runs the concurrent scenario against the SQLite and
// libSQL file backends, whose pools hold several connections.
func TestSQLBackendsPass(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: real databases")
	}
	for _, scheme := range []string{"sqlite", "libsql"} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", scheme, seed), func(t *testing.T) {
				st, _ := openBackend(t, scheme)
				res, err := Run(context.Background(), st, Config{Clients: 6, Executions: 3, Ops: 500, Seed: seed, TraceMax: 5, Store: scheme})
				if err != nil {
					t.Fatal(err)
				}
				logResult(t, res)
				if res.Verdict != linearizability.Ok {
					t.Fatalf("verdict %s: %v", res.Verdict, res.Err)
				}
				if res.Counts.Conflicts == 0 {
					t.Error("no conflicts: the run had no contention")
				}
			})
		}
	}
}

// racyStore is the SQLite backend with a read-check-write race in its
// commit: the version is checked with one SELECT and, after a gap, written
// with a separate unconditional UPDATE (or DELETE, for a row that was
// absent), outside any transaction, that puts the row back at the version
// checked; only then does the backend's own commit run. A writer that won
// in the gap is overwritten. Used by one client at a time it behaves
// exactly like the backend.
type racyStore struct {
	model.Store
	db  *sql.DB
	gap time.Duration
}

func (s *racyStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	var stored int64
	err := s.db.QueryRowContext(ctx, "SELECT version FROM executions WHERE id = ?", exe.ID).Scan(&stored)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if exists && stored != exe.Version || !exists && exe.Version != 0 {
		c := &model.StoreConflict{ID: exe.ID, Expected: exe.Version}
		if exists {
			c.Found = model.Ptr(stored)
		}
		return c
	}
	time.Sleep(s.gap)
	if exists {
		_, err = s.db.ExecContext(ctx, "UPDATE executions SET version = ? WHERE id = ?", exe.Version, exe.ID)
	} else {
		_, err = s.db.ExecContext(ctx, "DELETE FROM executions WHERE id = ?", exe.ID)
	}
	if err != nil {
		return err
	}
	return s.Store.Commit(ctx, exe, b)
}

// SetTraceMax forwards to the backend, so that Run can set the cap.
func (s *racyStore) SetTraceMax(n int) { s.Store.(model.TraceMaxSetter).SetTraceMax(n) }

func (s *racyStore) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// closingRacy also closes the racy store's own handle.
type closingRacy struct{ racyStore }

func (c *closingRacy) Close() error { return errors.Join(c.db.Close(), c.Store.Close()) }

func openRacy(t *testing.T) *racyStore {
	t.Helper()
	st, path := openBackend(t, "sqlite")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return &racyStore{Store: st, db: db, gap: 200 * time.Microsecond}
}

// TestRacyStorePassesSequentialUse: one client never meets the race — not in
// the sequential conformance suite, not in a one-client workload.
func TestRacyStorePassesSequentialUse(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: real databases")
	}
	open := func(ctx context.Context, cfg model.Config) (model.Store, error) {
		path := filepath.Join(t.TempDir(), "store.db")
		st, err := backends.Open(ctx, "sqlite:"+path, cfg)
		if err != nil {
			return nil, err
		}
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return nil, errors.Join(err, st.Close())
		}
		return &closingRacy{racyStore{Store: st, db: db}}, nil
	}
	rep, err := conformance.Check(context.Background(), open, conformance.CheckConfig{Seed: 1, Checks: 30})
	if err != nil || !rep.Passed {
		t.Fatalf("the racy store must pass the sequential conformance suite: %v %s %v", err, rep.Failure, rep.MinimalSteps)
	}
	res, err := Run(context.Background(), openRacy(t), Config{Clients: 1, Executions: 2, Ops: 300, Seed: 1, TraceMax: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Ok {
		logResult(t, res)
		t.Fatalf("sequential use: verdict %s: %v", res.Verdict, res.Err)
	}
}

// TestRacyStoreIsCaught: with contention, two writers pass the check from
// the same version and both return ok; the checker names the lost update.
func TestRacyStoreIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: real databases")
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			dir := t.TempDir()
			res, err := Run(context.Background(), openRacy(t), Config{
				Clients: 8, Executions: 2, Ops: 400, Seed: seed, TraceMax: 5, OutDir: dir,
				Mix: Mix{Commit: 10, Save: 2, Load: 3, Deliver: 2, ReadTrace: 1},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != linearizability.Illegal || !errors.Is(res.Err, linearizability.ErrLostUpdate) {
				logResult(t, res)
				t.Fatalf("verdict %s, guarantees %v; want Illegal naming lost update", res.Verdict, linearizability.Guarantees(res.Err))
			}
			t.Logf("caught: %v", res.Report.Violations[0])
		})
	}
}
