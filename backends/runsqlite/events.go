package runsqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/model/runstore"
)

// ListRunEvents implements runstore.Store.
func (s *Store) ListRunEvents(ctx context.Context, runID string, after int64, limit int) ([]runstore.RunEvent, error) {
	if after < 0 || limit < 0 {
		return nil, s.errorf("list_run_events", fmt.Errorf("%w: after and limit must not be negative, got %d and %d", runstore.ErrInvalidArgument, after, limit))
	}
	if limit == 0 {
		limit = -1
	}
	rows, err := queryAll(ctx, s.db, scanEvent, `SELECT `+eventColumns+` FROM run_events
		WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`, runID, after, limit)
	if err != nil {
		return nil, s.errorf("list_run_events", err)
	}
	return decode(rows, runstore.EventRow.Event)
}

// AppendRunEvent implements runstore.Store.
func (s *Store) AppendRunEvent(ctx context.Context, runID, typ string, data json.RawMessage, now time.Time) (runstore.RunEvent, error) {
	d, err := runstore.Object(data, "event data")
	if err != nil {
		return runstore.RunEvent{}, s.errorf("append_run_event", err)
	}
	var out runstore.EventRow
	err = s.write(ctx, func(c *sql.Conn) error {
		if _, err := runRow(ctx, c, runID); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, c, runID, typ, d, runstore.FormatTime(now)); err != nil {
			return err
		}
		out, err = scanEvent(c.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM run_events
			WHERE run_id = ? ORDER BY sequence DESC LIMIT 1`, runID))
		return err
	})
	if err != nil {
		return runstore.RunEvent{}, s.errorf("append_run_event", err)
	}
	return out.Event()
}

// AppendCheckpoint implements runstore.Store.
func (s *Store) AppendCheckpoint(ctx context.Context, cp runstore.Checkpoint) error {
	row, err := runstore.PrepareCheckpoint(cp)
	if err != nil {
		return s.errorf("append_checkpoint", err)
	}
	err = s.write(ctx, func(c *sql.Conn) error {
		if _, err := runRow(ctx, c, cp.RunID); err != nil {
			return err
		}
		return s.insertCheckpoint(ctx, c, row)
	})
	return s.errorf("append_checkpoint", err)
}

// insertCheckpoint checks that the checkpoint's sequence is the run's next
// (Statements.CheckpointNext), inserts
// it and logs run.checkpoint.created, in the caller's transaction.
func (s *Store) insertCheckpoint(ctx context.Context, c *sql.Conn, row runstore.CheckpointRow) error {
	var next bool
	var want int64
	err := c.QueryRowContext(ctx, s.st.CheckpointNext, sql.Named("run", row.RunID), sql.Named("sequence", row.Sequence)).Scan(&next, &want)
	if err != nil {
		return fmt.Errorf("read the run's next checkpoint number: %w", err)
	}
	if !next {
		return fmt.Errorf("%w: checkpoint sequence must be %d, got %d", runstore.ErrConflict, want, row.Sequence)
	}
	_, err = c.ExecContext(ctx, `INSERT INTO checkpoints(`+checkpointColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		row.ID, row.RunID, row.Sequence, row.PlanHash, row.State, row.NextNodes, row.PendingInterrupts,
		row.EffectWatermark, row.CreatedAt)
	if err != nil {
		return asConflict(err, fmt.Sprintf("checkpoint %q already exists", row.ID))
	}
	return s.appendEvent(ctx, c, row.RunID, runstore.EventCheckpointCreated, runstore.CheckpointData(row.ID, row.Sequence), row.CreatedAt)
}

// LatestCheckpoint implements runstore.Store.
func (s *Store) LatestCheckpoint(ctx context.Context, runID string) (*runstore.Checkpoint, error) {
	rows, err := queryAll(ctx, s.db, scanCheckpoint, `SELECT `+checkpointColumns+` FROM checkpoints
		WHERE run_id = ? ORDER BY sequence DESC LIMIT 1`, runID)
	if err != nil {
		return nil, s.errorf("latest_checkpoint", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	cp, err := rows[0].Checkpoint()
	if err != nil {
		return nil, s.errorf("latest_checkpoint", err)
	}
	return &cp, nil
}

// ListCheckpoints implements runstore.Store.
func (s *Store) ListCheckpoints(ctx context.Context, runID string) ([]runstore.Checkpoint, error) {
	rows, err := queryAll(ctx, s.db, scanCheckpoint, `SELECT `+checkpointColumns+` FROM checkpoints
		WHERE run_id = ? ORDER BY sequence`, runID)
	if err != nil {
		return nil, s.errorf("list_checkpoints", err)
	}
	return decode(rows, runstore.CheckpointRow.Checkpoint)
}
