package runsqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/model/runstore"
)

// CreateRun implements runstore.Store: the idempotency lookup and the insert in
// one transaction, so two concurrent creates with one key give one run.
func (s *Store) CreateRun(ctx context.Context, req runstore.NewRun) (runstore.Run, error) {
	row, err := runstore.PrepareRun(req)
	if err != nil {
		return runstore.Run{}, s.errorf("create_run", err)
	}
	var out runstore.RunRow
	err = s.write(ctx, func(c *sql.Conn) error {
		if row.IdempotencyKey != nil {
			old, err := scanRun(c.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE tenant_id = ? AND idempotency_key = ?`,
				row.TenantID, *row.IdempotencyKey))
			switch {
			case err == nil && old.Fingerprint != row.Fingerprint:
				return fmt.Errorf("%w: idempotency key %q was already used for a different request", runstore.ErrConflict, *row.IdempotencyKey)
			case err == nil:
				out = old
				return nil
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		_, err := c.ExecContext(ctx, `INSERT INTO runs(`+runColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			row.ID, row.PlanID, row.RevisionID, row.SessionID, row.TenantID, string(row.Status), row.State, row.NextNodes,
			row.IdempotencyKey, row.Context, row.Priority, row.Fingerprint, row.CreatedAt, row.UpdatedAt, row.Version)
		if err != nil {
			// The seed, too, learns of a taken id or a busy session from
			// the constraint.
			return asConflict(err, fmt.Sprintf("run %q already exists or session %q has an active run", row.ID, row.SessionID))
		}
		out = row
		return s.appendEvent(ctx, c, row.ID, runstore.EventCreated, runstore.CreatedData(), row.CreatedAt)
	})
	if err != nil {
		return runstore.Run{}, s.errorf("create_run", err)
	}
	return out.Run()
}

// GetRun implements runstore.Store.
func (s *Store) GetRun(ctx context.Context, id string) (runstore.Run, error) {
	row, err := runRow(ctx, s.db, id)
	if err != nil {
		return runstore.Run{}, s.errorf("get_run", err)
	}
	return row.Run()
}

// ListRuns implements runstore.Store.
func (s *Store) ListRuns(ctx context.Context, f runstore.ListFilter) ([]runstore.Run, error) {
	if f.Limit < 0 {
		return nil, s.errorf("list_runs", fmt.Errorf("%w: limit must not be negative, got %d", runstore.ErrInvalidArgument, f.Limit))
	}
	where := []string{"tenant_id = ?"}
	args := []any{f.TenantID}
	if f.After != "" {
		var created, id string
		err := s.db.QueryRowContext(ctx, `SELECT created_at, id FROM runs WHERE id = ? AND tenant_id = ?`, f.After, f.TenantID).Scan(&created, &id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, s.errorf("list_runs", fmt.Errorf("%w: cursor run %q in tenant %q", runstore.ErrNotFound, f.After, f.TenantID))
		}
		if err != nil {
			return nil, s.errorf("list_runs", err)
		}
		where = append(where, s.st.ListAfter)
		args = append(args, created, id)
	}
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	if len(f.Statuses) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(", ?", len(f.Statuses)-1)+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	limit := -1 // SQLite: no limit
	if f.Limit > 0 {
		limit = f.Limit
	}
	args = append(args, limit)
	rows, err := queryAll(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created_at, id LIMIT ?`, args...)
	if err != nil {
		return nil, s.errorf("list_runs", err)
	}
	return decode(rows, runstore.RunRow.Run)
}

// TransitionRun implements runstore.Store.
func (s *Store) TransitionRun(ctx context.Context, req runstore.Transition) (runstore.Run, error) {
	if !req.Target.Known() {
		return runstore.Run{}, s.errorf("transition_run", fmt.Errorf("%w: unknown status %q", runstore.ErrInvalidArgument, req.Target))
	}
	var state string
	if req.State != nil {
		var err error
		if state, err = runstore.Object(req.State, "state"); err != nil {
			return runstore.Run{}, s.errorf("transition_run", err)
		}
	}
	now := runstore.FormatTime(req.Now)
	var out runstore.RunRow
	err := s.write(ctx, func(c *sql.Conn) error {
		cur, err := s.runAt(ctx, c, req.RunID, req.ExpectedVersion)
		if err != nil {
			return err
		}
		if err := runstore.AssertTransition(cur.Status, req.Target); err != nil {
			return err
		}
		next := cur
		if req.State != nil {
			next.State = state
		}
		if req.NextNodes != nil {
			next.NextNodes = runstore.StringList(req.NextNodes)
		}
		res, err := c.ExecContext(ctx, `UPDATE runs SET status = ?, state_json = ?, next_nodes_json = ?, updated_at = ?,
			version = version + 1 WHERE id = ? AND version = ?`,
			string(req.Target), next.State, next.NextNodes, now, cur.ID, cur.Version)
		if err := oneRow(res, err, cur.ID); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, c, cur.ID, runstore.EventStateChanged, runstore.StateChangedData(cur.Status, req.Target), now); err != nil {
			return err
		}
		out, err = runRow(ctx, c, cur.ID)
		return err
	})
	if err != nil {
		return runstore.Run{}, s.errorf("transition_run", err)
	}
	return out.Run()
}

// setStatus moves a run read at cur.Version to status at now, the seed's
// _update_status.
func setStatus(ctx context.Context, c *sql.Conn, cur runstore.RunRow, status runstore.Status, now string) error {
	res, err := c.ExecContext(ctx, `UPDATE runs SET status = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
		string(status), now, cur.ID, cur.Version)
	return oneRow(res, err, cur.ID)
}

// oneRow checks that a guarded UPDATE of run id changed exactly one row.
// Inside BEGIN IMMEDIATE the guard cannot lose; a miss is still reported
// as the conflict it would be.
func oneRow(res sql.Result, err error, id string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: run %q version conflict", runstore.ErrConflict, id)
	}
	return nil
}

// appendEvent appends the run's next event, numbered max+1, in the
// caller's transaction.
func (s *Store) appendEvent(ctx context.Context, c *sql.Conn, runID, typ, data, now string) error {
	_, err := c.ExecContext(ctx, s.st.AppendEvent, sql.Named("run", runID), sql.Named("type", typ),
		sql.Named("data", data), sql.Named("now", now))
	if err != nil {
		return fmt.Errorf("append event %s: %w", typ, err)
	}
	return nil
}
