package mutants

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/internal/wait"
	"github.com/storecheck/storecheck/model"
)

// seqBeforeTx takes outbox and spawn seqs before the commit's transaction,
// "so that the transaction does not wait on a counter": a sequence service
// (here a counter of the process, which one fetch in seqFetchSlowEvery
// reaches in a round trip of seqFetchSlow) hands each commit its seqs, and
// the transaction then writes the entries at them. A commit's seqs are
// therefore in the order the commits fetched them, not the order they took
// effect in: a commit whose fetch came back late takes effect after a
// commit of another execution that fetched later. Commits of one execution
// are serialised by a lock of the process, taken before the fetch (one
// writer per execution, "so that they do not fight over the
// compare-and-swap"), which keeps what it should:
//
//   - one execution's entries ascend in version order;
//   - seqs are never reused (a losing commit burns its seqs, which the
//     contract allows);
//   - one client at a time is numbered in commit order, so the sequential
//     suite passes it.
//
// The lock also lets a slow commit win its compare-and-swap as often as
// another (no commit of its execution overtakes it during the fetch); a
// draft without it, whose slow commits mostly lost to the other writers of
// their execution, was caught on 92 of seeds 1–100 (docs/DETECTION.md).
type seqBeforeTx struct {
	*base
	traceMax atomic.Int64
	fetches  atomic.Uint64
	// wait is the slow fetch's round trip; tests replace it.
	wait func(context.Context) error

	mu    sync.Mutex // guards next and execs
	next  map[string]int64
	execs map[string]*sync.Mutex
}

// seqFetchSlowEvery and seqFetchSlow: one fetch in three comes back after
// 2 ms.
const (
	seqFetchSlowEvery = 3
	seqFetchSlow      = 2 * time.Millisecond
)

func wrapSeqBeforeTx(_ context.Context, b *base, cfg model.Config) (model.Store, error) {
	s := &seqBeforeTx{base: b, next: map[string]int64{}, execs: map[string]*sync.Mutex{}, wait: sleepSlowFetch}
	s.traceMax.Store(int64(cfg.TraceMax))
	return s, nil
}

// sleepSlowFetch waits out a slow fetch's round trip.
func sleepSlowFetch(ctx context.Context) error {
	if !wait.Sleep(ctx, seqFetchSlow) {
		return ctx.Err()
	}
	return nil
}

// SetTraceMax implements model.TraceMaxSetter.
func (s *seqBeforeTx) SetTraceMax(n int) {
	s.traceMax.Store(int64(n))
	s.base.SetTraceMax(n)
}

// Reset implements model.Resetter: the tables are emptied, and the counters
// read again from the tables' AUTOINCREMENT counters at the next fetch.
func (s *seqBeforeTx) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = map[string]int64{}
	return s.base.Reset(ctx)
}

// Save implements model.Store: a commit with an empty batch.
func (s *seqBeforeTx) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// execLock is the lock the commits of execution id take.
func (s *seqBeforeTx) execLock(id string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.execs[id]
	if !ok {
		l = &sync.Mutex{}
		s.execs[id] = l
	}
	return l
}

// fetch takes n seqs of queue table from the counter, outside any
// transaction, and returns the first; the counter starts above the table's
// AUTOINCREMENT counter.
func (s *seqBeforeTx) fetch(ctx context.Context, table string, n int) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	s.mu.Lock()
	first, ok := s.next[table]
	if !ok {
		var hi sql.NullInt64
		if err := s.DB().QueryRowContext(ctx, "SELECT seq FROM sqlite_sequence WHERE name = ?", table).Scan(&hi); err != nil && !errors.Is(err, sql.ErrNoRows) {
			s.mu.Unlock()
			return 0, fmt.Errorf("read the %s counter: %w", table, err)
		}
		first = hi.Int64 + 1
	}
	s.next[table] = first + int64(n)
	s.mu.Unlock()
	// BUG: the seqs are taken; a commit that fetched later may take
	// effect before this one does, with higher seqs.
	if s.fetches.Add(1)%seqFetchSlowEvery == 0 {
		if err := s.wait(ctx); err != nil {
			return 0, err
		}
	}
	return first, nil
}

// Commit implements model.Store: the seqs fetched first, then the
// compare-and-swap and the whole batch in one transaction.
func (s *seqBeforeTx) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	c, err := guarded.Prepare(exe, b, int(s.traceMax.Load()))
	if err != nil {
		return s.errorf("commit %q: %w", exe.ID, notApplied(err))
	}
	l := s.execLock(exe.ID)
	l.Lock()
	defer l.Unlock()
	outbox, err := s.fetch(ctx, "outbox", len(c.Emits))
	if err != nil {
		return s.errorf("commit %q: fetch outbox seqs: %w", exe.ID, notApplied(err))
	}
	spawns, err := s.fetch(ctx, "spawns", len(c.Spawns))
	if err != nil {
		return s.errorf("commit %q: fetch spawn seqs: %w", exe.ID, notApplied(err))
	}
	next := map[string]int64{"outbox": outbox, "spawns": spawns}
	err = casInTx(ctx, s.DB(), c, func(conn *sql.Conn) error {
		return writeAtSeqs(ctx, conn, c, func(table string) (int64, error) { next[table]++; return next[table] - 1, nil })
	})
	if err != nil {
		var conflict *model.StoreConflict
		if errors.As(err, &conflict) {
			return conflict
		}
		return s.errorf("commit %q: %w", exe.ID, err)
	}
	exe.Version = c.New()
	return nil
}
