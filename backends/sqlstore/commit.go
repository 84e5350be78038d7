package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/rowconv"
	"github.com/storecheck/storecheck/model"
)

// prepared is a batch in the form the tables store it, built before the
// transaction opens so that an invalid batch writes nothing.
type prepared struct {
	data string
	model.BatchRows
}

// prepare encodes exe at its next version and the batch canonically, as
// model.Reference does, and rejects what the reference rejects.
func prepare(exe *model.Execution, b model.Batch) (prepared, error) {
	data, err := model.EncodeNext(exe)
	if err != nil {
		return prepared{}, err
	}
	rows, err := model.PrepareBatch(exe.ID, b)
	if err != nil {
		return prepared{}, err
	}
	return prepared{data: data, BatchRows: rows}, nil
}

// Commit implements model.Store: the CAS and the whole batch in one
// transaction; exe.Version advances only once that transaction committed.
func (s *Store) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	p, err := prepare(exe, b)
	if err != nil {
		return s.errorf("commit %q: %w", exe.ID, notApplied(err))
	}
	old := exe.Version
	err = s.inTx(ctx, s.st.BeginWrite, func(c *sql.Conn) error {
		if err := s.compareAndSwap(ctx, c, exe, p.data); err != nil {
			return err
		}
		if err := s.writeBatch(ctx, c, exe.ID, b, p); err != nil {
			return err
		}
		if s.hooks.BeforeCommit != nil {
			if err := s.hooks.BeforeCommit(ctx, exe); err != nil {
				return fmt.Errorf("before-commit hook: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		var conflict *model.StoreConflict
		if errors.As(err, &conflict) {
			return conflict
		}
		return s.errorf("commit %q: %w", exe.ID, err)
	}
	exe.Version = old + 1
	return nil
}

// Save implements model.Store: a commit with an empty batch.
func (s *Store) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// compareAndSwap writes data at exe.Version+1 if the row is at exe.Version,
// inserts it when there is no row and exe.Version is 0, and otherwise
// returns a *model.StoreConflict.
func (s *Store) compareAndSwap(ctx context.Context, c *sql.Conn, exe *model.Execution, data string) error {
	old := exe.Version
	res, err := c.ExecContext(ctx, s.st.UpdateExecution, data, old+1, exe.ID, old)
	if err != nil {
		return fmt.Errorf("update execution: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update execution: rows affected: %w", err)
	}
	if n > 0 {
		return nil
	}
	var found any
	err = c.QueryRowContext(ctx, s.st.SelectVersion, exe.ID).Scan(&found)
	switch {
	case errors.Is(err, sql.ErrNoRows) && old == 0:
		if _, err := c.ExecContext(ctx, s.st.InsertExecution, exe.ID, exe.DefinitionID, data, old+1); err != nil {
			return fmt.Errorf("insert execution: %w", err)
		}
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return &model.StoreConflict{ID: exe.ID, Expected: old}
	case err != nil:
		return fmt.Errorf("select version: %w", err)
	}
	v, err := rowconv.Integer(found)
	if err != nil {
		return fmt.Errorf("select version: %w", err)
	}
	return &model.StoreConflict{ID: exe.ID, Expected: old, Found: &v}
}

// writeBatch applies the side-writes of a commit in the seed's order:
// outbox, dedupe marker, spawns, timers, trace.
func (s *Store) writeBatch(ctx context.Context, c *sql.Conn, id string, b model.Batch, p prepared) error {
	for i, e := range p.Emits {
		if _, err := c.ExecContext(ctx, s.st.InsertOutbox, nullable(e.TargetID), e.Event); err != nil {
			return fmt.Errorf("insert outbox emit %d: %w", i, err)
		}
	}
	if b.ProcessedEventID != nil {
		if _, err := c.ExecContext(ctx, s.st.InsertProcessed, id, *b.ProcessedEventID); err != nil {
			return fmt.Errorf("insert processed event: %w", err)
		}
	}
	for i, sp := range p.Spawns {
		if _, err := c.ExecContext(ctx, s.st.InsertSpawn, sp.ParentID, sp.ChildID, sp.RootPath, sp.Context); err != nil {
			return fmt.Errorf("insert spawn %d: %w", i, err)
		}
	}
	for i, t := range b.Timers {
		var err error
		if t.Action == model.TimerSchedule {
			_, err = c.ExecContext(ctx, s.st.UpsertTimer, id, t.Path, t.FireAt)
		} else {
			_, err = c.ExecContext(ctx, s.st.CancelTimer, id, t.Path)
		}
		if err != nil {
			return fmt.Errorf("timer op %d (%s %q): %w", i, t.Action, t.Path, err)
		}
	}
	if p.Trace != nil {
		return s.writeTrace(ctx, c, id, *p.Trace)
	}
	return nil
}

// writeTrace appends one canonical trace entry at max(idx)+1 and, with a
// cap, trims the ring, inside the caller's transaction.
func (s *Store) writeTrace(ctx context.Context, c *sql.Conn, id, entry string) error {
	if _, err := c.ExecContext(ctx, s.st.InsertTrace, id, id, entry); err != nil {
		return fmt.Errorf("insert trace: %w", err)
	}
	if limit := s.traceMax.Load(); limit > 0 {
		if _, err := c.ExecContext(ctx, s.st.TrimTrace, id, id, limit); err != nil {
			return fmt.Errorf("trim trace: %w", err)
		}
	}
	return nil
}

// AppendTrace implements model.Store: one step and its trim in one
// transaction. Like the seed, it does not require the execution to exist.
func (s *Store) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	c, err := model.CanonicalObject(entry, "trace entry")
	if err != nil {
		return s.errorf("append trace %q: %w", id, notApplied(err))
	}
	err = s.inTx(ctx, s.st.BeginWrite, func(conn *sql.Conn) error {
		return s.writeTrace(ctx, conn, id, c)
	})
	if err != nil {
		return s.errorf("append trace %q: %w", id, err)
	}
	return nil
}

// nullable turns a *string into a driver argument: nil or the string.
func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
