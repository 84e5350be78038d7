package runsqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/model/runstore"
)

// The columns of each table in the order of its runs.*Row fields.
const (
	runColumns = `id, plan_id, revision_id, session_id, tenant_id, status, state_json, next_nodes_json,
		idempotency_key, context_json, priority, request_fingerprint, created_at, updated_at, version`
	eventColumns      = `run_id, sequence, type, data_json, created_at`
	checkpointColumns = `id, run_id, sequence, plan_hash, state_json, next_nodes_json, pending_interrupts_json,
		effect_watermark, created_at`
	interruptColumns = `id, run_id, kind, request_json, created_at, expires_at, decision_kind, decision_actor_id,
		decision_reason, decision_payload_json, decided_at`
)

// querier is what both *sql.DB and *sql.Conn offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (runstore.RunRow, error) {
	var r runstore.RunRow
	var status string
	var key sql.NullString
	err := sc.Scan(&r.ID, &r.PlanID, &r.RevisionID, &r.SessionID, &r.TenantID, &status, &r.State, &r.NextNodes,
		&key, &r.Context, &r.Priority, &r.Fingerprint, &r.CreatedAt, &r.UpdatedAt, &r.Version)
	r.Status, r.IdempotencyKey = runstore.Status(status), nullString(key)
	return r, err
}

func scanEvent(sc scanner) (runstore.EventRow, error) {
	var e runstore.EventRow
	err := sc.Scan(&e.RunID, &e.Sequence, &e.Type, &e.Data, &e.CreatedAt)
	return e, err
}

func scanCheckpoint(sc scanner) (runstore.CheckpointRow, error) {
	var c runstore.CheckpointRow
	err := sc.Scan(&c.ID, &c.RunID, &c.Sequence, &c.PlanHash, &c.State, &c.NextNodes, &c.PendingInterrupts,
		&c.EffectWatermark, &c.CreatedAt)
	return c, err
}

func scanInterrupt(sc scanner) (runstore.InterruptRow, error) {
	var in runstore.InterruptRow
	var exp, kind, actor, reason, payload, decided sql.NullString
	err := sc.Scan(&in.ID, &in.RunID, &in.Kind, &in.Request, &in.CreatedAt, &exp, &kind, &actor, &reason, &payload, &decided)
	in.ExpiresAt, in.DecisionKind, in.DecisionActor = nullString(exp), nullString(kind), nullString(actor)
	in.DecisionReason, in.DecisionPayload, in.DecidedAt = nullString(reason), nullString(payload), nullString(decided)
	return in, err
}

func scanLease(sc scanner) (runstore.LeaseRow, error) {
	var l runstore.LeaseRow
	var active int64
	err := sc.Scan(&l.ID, &l.RunID, &l.Holder, &l.ExpiresAt, &l.Token, &active, &l.CreatedAt, &l.UpdatedAt)
	l.Active = active != 0
	return l, err
}

func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

// queryAll runs a query and scans every row.
func queryAll[R any](ctx context.Context, q querier, scan func(scanner) (R, error), query string, args ...any) ([]R, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []R
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// runRow reads one run, or runstore.ErrNotFound.
func runRow(ctx context.Context, q querier, id string) (runstore.RunRow, error) {
	r, err := scanRun(q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return runstore.RunRow{}, fmt.Errorf("%w: run %q", runstore.ErrNotFound, id)
	}
	return r, err
}

// runAt reads one run at the version the caller expects (Statements.RunAt),
// as the seed's _required_run_row followed by its version test: a run
// missing is runstore.ErrNotFound, one at another version a conflict.
func (s *Store) runAt(ctx context.Context, q querier, id string, expected int64) (runstore.RunRow, error) {
	r, err := scanRun(q.QueryRowContext(ctx, s.st.RunAt, sql.Named("id", id), sql.Named("expected", expected)))
	if !errors.Is(err, sql.ErrNoRows) {
		return r, err
	}
	// No row at the expected version: the run is missing, or at another.
	if r, err = runRow(ctx, q, id); err != nil {
		return r, err
	}
	return r, fmt.Errorf("%w: run %q version conflict: expected %d, found %d", runstore.ErrConflict, id, expected, r.Version)
}

// decode converts rows to values with their decoder.
func decode[R, V any](rows []R, dec func(R) (V, error)) ([]V, error) {
	out := make([]V, 0, len(rows))
	for _, r := range rows {
		v, err := dec(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
