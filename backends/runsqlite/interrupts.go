package runsqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/model/runstore"
)

// CreateInterrupt implements runstore.Store.
func (s *Store) CreateInterrupt(ctx context.Context, in runstore.Interrupt, expected int64) (runstore.Run, error) {
	row, err := runstore.PrepareInterrupt(in)
	if err != nil {
		return runstore.Run{}, s.errorf("create_interrupt", err)
	}
	var out runstore.RunRow
	err = s.write(ctx, func(c *sql.Conn) error {
		cur, err := s.runAt(ctx, c, in.RunID, expected)
		if err != nil {
			return err
		}
		if err := runstore.AssertTransition(cur.Status, runstore.Waiting); err != nil {
			return err
		}
		_, err = c.ExecContext(ctx, `INSERT INTO interrupts(id, run_id, kind, request_json, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, row.ID, row.RunID, row.Kind, row.Request, row.CreatedAt, row.ExpiresAt)
		if err != nil {
			return asConflict(err, fmt.Sprintf("interrupt %q already exists", row.ID))
		}
		if err := setStatus(ctx, c, cur, runstore.Waiting, row.CreatedAt); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, s.st.InterruptEndLease, sql.Named("run", cur.ID), sql.Named("now", row.CreatedAt)); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, c, cur.ID, runstore.EventInterruptCreated, runstore.InterruptCreatedData(row.ID, row.Kind), row.CreatedAt); err != nil {
			return err
		}
		out, err = runRow(ctx, c, cur.ID)
		return err
	})
	if err != nil {
		return runstore.Run{}, s.errorf("create_interrupt", err)
	}
	return out.Run()
}

// GetInterrupt implements runstore.Store.
func (s *Store) GetInterrupt(ctx context.Context, id string) (runstore.Interrupt, error) {
	row, err := interruptRow(ctx, s.db, id)
	if err != nil {
		return runstore.Interrupt{}, s.errorf("get_interrupt", err)
	}
	return row.Interrupt()
}

func interruptRow(ctx context.Context, q querier, id string) (runstore.InterruptRow, error) {
	row, err := scanInterrupt(q.QueryRowContext(ctx, `SELECT `+interruptColumns+` FROM interrupts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return row, fmt.Errorf("%w: interrupt %q", runstore.ErrNotFound, id)
	}
	return row, err
}

// ListInterrupts implements runstore.Store.
func (s *Store) ListInterrupts(ctx context.Context, tenantID string, pendingOnly bool) ([]runstore.Interrupt, error) {
	pending := ""
	if pendingOnly {
		pending = " AND i.decided_at IS NULL"
	}
	rows, err := queryAll(ctx, s.db, scanInterrupt, `SELECT i.id, i.run_id, i.kind, i.request_json, i.created_at,
		i.expires_at, i.decision_kind, i.decision_actor_id, i.decision_reason, i.decision_payload_json, i.decided_at
		FROM interrupts AS i JOIN runs AS r ON r.id = i.run_id
		WHERE r.tenant_id = ?`+pending+` ORDER BY i.created_at, i.id`, tenantID)
	if err != nil {
		return nil, s.errorf("list_interrupts", err)
	}
	return decode(rows, runstore.InterruptRow.Interrupt)
}

// decide writes a decision on interrupt id if it is still pending
// (Statements.DecideInterrupt) and reports whether it was.
func (s *Store) decide(ctx context.Context, c *sql.Conn, id string, d runstore.DecidedColumns) (bool, error) {
	res, err := c.ExecContext(ctx, s.st.DecideInterrupt, sql.Named("id", id), sql.Named("kind", d.Kind), sql.Named("actor", d.Actor),
		sql.Named("reason", d.Reason), sql.Named("payload", d.Payload), sql.Named("now", d.DecidedAt))
	if err != nil {
		return false, fmt.Errorf("decide interrupt %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DecideInterrupt implements runstore.Store.
func (s *Store) DecideInterrupt(ctx context.Context, id string, d runstore.Decision, expected int64, now time.Time) (runstore.Run, error) {
	cols, err := runstore.PrepareDecision(d, now)
	if err != nil {
		return runstore.Run{}, s.errorf("decide_interrupt", err)
	}
	var out runstore.RunRow
	err = s.write(ctx, func(c *sql.Conn) error {
		in, err := interruptRow(ctx, c, id)
		if err != nil {
			return err
		}
		// The guarded write comes first, as the check it carries: a
		// later error rolls it back.
		pending, err := s.decide(ctx, c, id, cols)
		if err != nil {
			return err
		}
		if !pending {
			return fmt.Errorf("%w: interrupt %q was already decided", runstore.ErrConflict, id)
		}
		cur, err := s.runAt(ctx, c, in.RunID, expected)
		if err != nil {
			return err
		}
		if err := runstore.AssertTransition(cur.Status, runstore.Queued); err != nil {
			return err
		}
		if err := setStatus(ctx, c, cur, runstore.Queued, cols.DecidedAt); err != nil {
			return err
		}
		data := runstore.InterruptDecidedData(id, d.Kind, d.ActorID)
		if err := s.appendEvent(ctx, c, cur.ID, runstore.EventInterruptDecided, data, cols.DecidedAt); err != nil {
			return err
		}
		out, err = runRow(ctx, c, cur.ID)
		return err
	})
	if err != nil {
		return runstore.Run{}, s.errorf("decide_interrupt", err)
	}
	return out.Run()
}

// ExpireInterrupts implements runstore.Store. Each run is re-read per interrupt
// (see runstore.Reference.ExpireInterrupts for why).
func (s *Store) ExpireInterrupts(ctx context.Context, now time.Time) ([]string, error) {
	cols := runstore.ExpiredDecision(now)
	ids := []string{}
	err := s.write(ctx, func(c *sql.Conn) error {
		due, err := queryAll(ctx, c, scanInterrupt, `SELECT `+interruptColumns+` FROM interrupts
			WHERE decided_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id`, cols.DecidedAt)
		if err != nil {
			return err
		}
		for _, in := range due {
			if _, err := s.decide(ctx, c, in.ID, cols); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, s.st.TimeOutRun, sql.Named("run", in.RunID), sql.Named("now", cols.DecidedAt)); err != nil {
				return fmt.Errorf("time run %q out: %w", in.RunID, err)
			}
			if err := s.appendEvent(ctx, c, in.RunID, runstore.EventInterruptExpired, runstore.InterruptExpiredData(in.ID), cols.DecidedAt); err != nil {
				return err
			}
			ids = append(ids, in.ID)
		}
		return nil
	})
	if err != nil {
		return nil, s.errorf("expire_interrupts", err)
	}
	return ids, nil
}
