package mutants

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/model"
)

// The mutants below get a commit wrong around the SQLite store's own
// commit. Each overrides Save too: the embedded store's Save would call the
// embedded Commit, not the mutant's.

// splitCommit writes the execution row and its side-writes in two
// transactions.
type splitCommit struct {
	*base
	traceMax atomic.Int64
	// gap is how long the row's transaction stands alone before the
	// side-writes' begins (split-visible only).
	gap time.Duration
}

func wrapSplitCommit(_ context.Context, b *base, cfg model.Config) (model.Store, error) {
	s := &splitCommit{base: b}
	s.traceMax.Store(int64(cfg.TraceMax))
	return s, nil
}

// SetTraceMax implements model.TraceMaxSetter.
func (s *splitCommit) SetTraceMax(n int) {
	s.traceMax.Store(int64(n))
	s.base.SetTraceMax(n)
}

// Save implements model.Store.
func (s *splitCommit) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store: the CAS, then the batch.
func (s *splitCommit) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	c, err := guarded.Prepare(exe, b, int(s.traceMax.Load()))
	if err != nil {
		return s.errorf("commit %q: %w", exe.ID, notApplied(err))
	}
	// The execution row alone, through the backend's own CAS transaction.
	row := exe.Clone()
	if err := s.Store.Save(ctx, row); err != nil {
		return err
	}
	if s.gap > 0 {
		time.Sleep(s.gap)
	}
	// BUG: the side-writes get a transaction of their own, after the row
	// has committed: in between, readers see the new version without its
	// outbox, dedupe marker, timers, spawns and trace step, and a writer
	// that builds on it can commit its own side-writes first.
	err = inTx(ctx, s.DB(), func(conn *sql.Conn) error {
		return execAll(ctx, conn, guarded.SideWrites(c, guarded.Unguarded))
	})
	if err != nil {
		// Not wrapped with %w: the side-writes' transaction was rolled
		// back (ErrNotApplied), but the execution row is committed, so the
		// commit as a whole must not read as not applied.
		return s.errorf("commit %q: execution row committed, side-writes failed: %s", exe.ID, err)
	}
	exe.Version = row.Version
	return nil
}

// splitVisible is splitCommit with every commit under one lock: writers
// are serialized, so none builds on a half-applied commit and the final
// tables are right; only a reader between the two transactions sees part
// of a commit. Reads and the other writes are splitCommit's (the base's).
type splitVisible struct {
	*splitCommit
	mu sync.Mutex
}

func wrapSplitVisible(ctx context.Context, b *base, cfg model.Config) (model.Store, error) {
	inner, err := wrapSplitCommit(ctx, b, cfg)
	if err != nil {
		return nil, err
	}
	return &splitVisible{splitCommit: inner.(*splitCommit)}, nil
}

// Save implements model.Store.
func (s *splitVisible) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store: splitCommit's two transactions, one
// writer at a time.
func (s *splitVisible) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gap = splitVisibleGap
	return s.splitCommit.Commit(ctx, exe, b)
}

// splitVisibleGap holds the two transactions of a split-visible commit
// apart, as a slow fsync or a descheduled writer would: with no gap the
// window is a few microseconds and whether a reader falls into it is luck
// (0–8 partial reads per 1,000-step run were measured, one run in 20 with
// none).
const splitVisibleGap = time.Millisecond

// dedupeBeforeCAS records the processed event before the commit.
type dedupeBeforeCAS struct{ *base }

func wrapDedupeBeforeCAS(_ context.Context, b *base, _ model.Config) (model.Store, error) {
	return &dedupeBeforeCAS{base: b}, nil
}

// Save implements model.Store.
func (s *dedupeBeforeCAS) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store.
func (s *dedupeBeforeCAS) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if b.ProcessedEventID != nil {
		// BUG: the marker is recorded first, in a statement of its own, "so
		// that the event can never be handled twice"; when the commit then
		// loses its CAS, the marker stays although nothing was handled.
		if _, err := s.DB().ExecContext(ctx, s.st.InsertProcessed, exe.ID, *b.ProcessedEventID); err != nil {
			return s.errorf("commit %q: record processed event: %w", exe.ID, err)
		}
	}
	return s.Store.Commit(ctx, exe, b)
}

// versionNotRestored forgets to undo the caller's version bump.
type versionNotRestored struct{ *base }

func wrapVersionNotRestored(_ context.Context, b *base, _ model.Config) (model.Store, error) {
	return &versionNotRestored{base: b}, nil
}

// Save implements model.Store.
func (s *versionNotRestored) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store the seed's way: bump, write, undo on a
// conflict — without the undo.
func (s *versionNotRestored) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	old := exe.Version
	exe.Version = old + 1 // bumped before the write, so the stored JSON carries it
	attempt := exe.Clone()
	attempt.Version = old
	err := s.Store.Commit(ctx, attempt, b)
	if _, ok := model.AsConflict(err); ok {
		// BUG: the seed undoes the bump here (exe.version = old); this
		// store forgets, and the caller's version stays old+1.
		return err
	}
	if err != nil {
		exe.Version = old
	}
	return err
}

// readCheckWrite checks the version with a SELECT and then writes blindly:
// its statements are blind-write's.
type readCheckWrite struct{ *base }

func wrapReadCheckWrite(_ context.Context, b *base, _ model.Config) (model.Store, error) {
	return &readCheckWrite{base: b}, nil
}

// Save implements model.Store.
func (s *readCheckWrite) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store.
func (s *readCheckWrite) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	// BUG: the version is checked by one statement, outside the write's
	// transaction, and the write that follows (blind-write's UPDATE, which
	// has no version condition) trusts that check. Two writers that both
	// read version v both write v+1.
	var stored int64
	err := s.DB().QueryRowContext(ctx, s.st.SelectVersion, exe.ID).Scan(&stored)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return s.errorf("commit %q: check version: %w", exe.ID, notApplied(err))
	}
	if exists && stored != exe.Version || !exists && exe.Version != 0 {
		c := &model.StoreConflict{ID: exe.ID, Expected: exe.Version}
		if exists {
			c.Found = &stored
		}
		return c
	}
	return s.Store.Commit(ctx, exe, b)
}
