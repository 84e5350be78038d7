package rqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/storecheck/storecheck/backends/internal/rowconv"
	"github.com/storecheck/storecheck/model"
)

// CommitStatements is the statement list a commit of exe with b sends, as
// one transaction: guarded.Statements with the seed's guard (the row holds
// our exact data). It is what Commit posts under guard=data (the default
// is GuardPreState), exposed for tests and tools.
func CommitStatements(exe *model.Execution, b model.Batch, traceMax int) ([]Statement, error) {
	stmts, _, err := commitList(exe, b, traceMax, GuardData)
	return stmts, err
}

// Commit implements model.Store: the whole batch as one transaction
// request. The first result's rows affected tell whether the CAS won;
// when it lost, nothing of the batch was written (every side-write is
// guarded on our data) and the stored version is read, at level strong,
// for the conflict.
func (s *Store) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	stmts, cas, err := commitList(exe, b, int(s.traceMax.Load()), s.guard)
	if err != nil {
		return errorf("commit %q: %w", exe.ID, notApplied(err))
	}
	res, err := s.executeResults(ctx, stmts)
	if err != nil {
		return errorf("commit %q: %w", exe.ID, err)
	}
	if res[cas].RowsAffected > 0 {
		exe.Version++
		return nil
	}
	return s.conflict(ctx, exe)
}

// conflictReads bounds the reads of the stored version after a lost CAS.
const conflictReads = 3

// conflict builds the *model.StoreConflict of a lost CAS from a strong read
// of the stored version. If that read keeps failing, the commit is still
// known to have written nothing, and says so.
func (s *Store) conflict(ctx context.Context, exe *model.Execution) error {
	var err error
	for attempt := range conflictReads {
		var rows [][]any
		if rows, err = s.query(ctx, LevelStrong, s.st.SelectVersion, exe.ID); err == nil {
			c := &model.StoreConflict{ID: exe.ID, Expected: exe.Version}
			if len(rows) > 0 {
				v, verr := rowconv.Integer(rows[0][0])
				if verr != nil {
					return errorf("commit %q: lost its CAS; stored version: %w", exe.ID, notApplied(verr))
				}
				c.Found = &v
			}
			return c
		}
		select {
		case <-ctx.Done():
			return errorf("commit %q: lost its CAS; the stored version could not be read: %w", exe.ID, notApplied(err))
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return errorf("commit %q: lost its CAS; the stored version could not be read: %w", exe.ID, notApplied(err))
}

// Save implements model.Store: a commit with an empty batch.
func (s *Store) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// AppendTrace implements model.Store. Decision: the seed sends the insert
// and the trim as two requests; here they go as one transaction, so that a
// failure cannot leave the ring over its cap. The rows are the same.
func (s *Store) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	c, err := model.CanonicalObject(entry, "trace entry")
	if err != nil {
		return errorf("append trace %q: %w", id, notApplied(err))
	}
	stmts := []Statement{{SQL: s.st.InsertTrace, Args: []any{id, id, c}}}
	if limit := s.traceMax.Load(); limit > 0 {
		stmts = append(stmts, Statement{SQL: s.st.TrimTrace, Args: []any{id, id, limit}})
	}
	if err := s.execute(ctx, stmts); err != nil {
		return errorf("append trace %q: %w", id, err)
	}
	return nil
}

// AckOutbox implements model.Store.
func (s *Store) AckOutbox(ctx context.Context, seq int64) error {
	if err := s.execute(ctx, []Statement{{SQL: s.st.AckOutbox, Args: []any{seq}}}); err != nil {
		return errorf("ack outbox %d: %w", seq, err)
	}
	return nil
}

// AckSpawn implements model.Store.
func (s *Store) AckSpawn(ctx context.Context, seq int64) error {
	if err := s.execute(ctx, []Statement{{SQL: s.st.AckSpawn, Args: []any{seq}}}); err != nil {
		return errorf("ack spawn %d: %w", seq, err)
	}
	return nil
}

// DeleteTimer implements model.Store.
func (s *Store) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	if err := s.execute(ctx, []Statement{{SQL: s.st.DeleteTimer, Args: []any{id, path, fireAt}}}); err != nil {
		return errorf("delete timer %q %q: %w", id, path, err)
	}
	return nil
}

// Reset implements model.Resetter: the six tables and the AUTOINCREMENT
// counters emptied in one transaction.
func (s *Store) Reset(ctx context.Context) error {
	stmts := make([]Statement, len(s.st.Reset))
	for i, q := range s.st.Reset {
		stmts[i] = Statement{SQL: q}
	}
	if err := s.execute(ctx, stmts); err != nil {
		return errorf("reset: %w", err)
	}
	return nil
}
