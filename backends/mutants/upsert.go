package mutants

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/model"
)

// upsertStore commits the rqlite way (seed 001): the statement list of
// package guarded — the guarded upsert, then every side-write conditioned by
// guard — run as one SQLite transaction that stands for rqlite's single
// /db/execute?transaction request. Like that request it always commits: a
// lost CAS is read afterwards from the rows affected by the first statement,
// and it is the guard alone that keeps a loser's side-writes out.
type upsertStore struct {
	*base
	guard    guarded.Guard
	traceMax atomic.Int64
}

// guardedWith returns the wrap of an upsertStore with guard g.
func guardedWith(g guarded.Guard) func(context.Context, *base, model.Config) (model.Store, error) {
	return func(_ context.Context, b *base, cfg model.Config) (model.Store, error) {
		s := &upsertStore{base: b, guard: g}
		s.traceMax.Store(int64(cfg.TraceMax))
		return s, nil
	}
}

// SetTraceMax implements model.TraceMaxSetter: the cap the trim statement
// is built with, and the standalone append's.
func (s *upsertStore) SetTraceMax(n int) {
	s.traceMax.Store(int64(n))
	s.base.SetTraceMax(n)
}

// Save implements model.Store: a commit with an empty batch.
func (s *upsertStore) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store with the guarded statement list.
func (s *upsertStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	c, err := guarded.Prepare(exe, b, int(s.traceMax.Load()))
	if err != nil {
		return s.errorf("commit %q: %w", exe.ID, notApplied(err))
	}
	var conflict *model.StoreConflict
	err = inTx(ctx, s.DB(), func(conn *sql.Conn) error {
		list := guarded.Statements(c, s.guard)
		res, err := conn.ExecContext(ctx, list[0].SQL, list[0].Args...)
		if err != nil {
			return fmt.Errorf("guarded upsert: %w", err)
		}
		won, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("guarded upsert: rows affected: %w", err)
		}
		// The side-writes run whatever the upsert did: in one request
		// there is no branching on it. Their guard decides.
		if err := execAll(ctx, conn, list[1:]); err != nil {
			return err
		}
		if won == 0 {
			conflict, err = foundVersion(ctx, conn, c)
		}
		return err
	})
	if err != nil {
		return s.errorf("commit %q: %w", exe.ID, err)
	}
	if conflict != nil {
		return conflict
	}
	exe.Version = c.New()
	return nil
}

// foundVersion builds the conflict of a lost CAS from the stored version.
func foundVersion(ctx context.Context, conn *sql.Conn, c guarded.Commit) (*model.StoreConflict, error) {
	conflict := &model.StoreConflict{ID: c.ID, Expected: c.Old}
	var v int64
	switch err := conn.QueryRowContext(ctx, guarded.SelectVersion, c.ID).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("select version: %w", err)
	default:
		conflict.Found = &v
	}
	return conflict, nil
}
