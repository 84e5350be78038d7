package runsqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/storecheck/storecheck/model/runstore"
)

// fenceArgs are the named parameters of a fence statement.
func fenceArgs(runID string, f runstore.Fence, now string) []any {
	return []any{sql.Named("run", runID), sql.Named("worker", f.Worker), sql.Named("token", f.Token), sql.Named("now", now)}
}

// requireFence returns runstore.ErrStaleLease unless query selects a row: the
// fence holds the run's lease at now.
func requireFence(ctx context.Context, q querier, query, runID string, f runstore.Fence, now string) error {
	var one int
	err := q.QueryRowContext(ctx, query, fenceArgs(runID, f, now)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: run %q, worker %q, token %d", runstore.ErrStaleLease, runID, f.Worker, f.Token)
	}
	return err
}

// ClaimNext implements runstore.Store.
func (s *Store) ClaimNext(ctx context.Context, worker string, lease time.Duration, now time.Time) (*runstore.Claim, error) {
	if strings.TrimSpace(worker) == "" || lease <= 0 {
		return nil, s.errorf("claim_next", fmt.Errorf("%w: worker id must not be empty and the lease longer than zero (got %q, %v)",
			runstore.ErrInvalidArgument, worker, lease))
	}
	at := runstore.FormatTime(now)
	var claim *runstore.Claim
	err := s.write(ctx, func(c *sql.Conn) error {
		cur, err := scanRun(c.QueryRowContext(ctx, s.st.NextQueued))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		res, err := c.ExecContext(ctx, `UPDATE runs SET status = ?, updated_at = ?, version = version + 1
			WHERE id = ? AND version = ? AND status = ?`, string(runstore.Running), at, cur.ID, cur.Version, string(runstore.Queued))
		if err := oneRow(res, err, cur.ID); err != nil {
			return err
		}
		var token int64
		err = c.QueryRowContext(ctx, s.st.UpsertLease, sql.Named("id", runstore.LeaseID(cur.ID)), sql.Named("run", cur.ID),
			sql.Named("worker", worker), sql.Named("expires", runstore.FormatTime(now.Add(lease))), sql.Named("now", at)).Scan(&token)
		if err != nil {
			return fmt.Errorf("grant lease: %w", err)
		}
		if err := s.appendEvent(ctx, c, cur.ID, runstore.EventClaimed, runstore.ClaimedData(worker, token), at); err != nil {
			return err
		}
		claim, err = readClaim(ctx, c, cur.ID)
		return err
	})
	if err != nil {
		return nil, s.errorf("claim_next", err)
	}
	return claim, nil
}

// readClaim reads a run and its lease back.
func readClaim(ctx context.Context, c *sql.Conn, runID string) (*runstore.Claim, error) {
	row, err := runRow(ctx, c, runID)
	if err != nil {
		return nil, err
	}
	l, err := scanLease(c.QueryRowContext(ctx, `SELECT `+leaseColumns+` FROM run_leases WHERE run_id = ?`, runID))
	if err != nil {
		return nil, fmt.Errorf("read lease: %w", err)
	}
	run, err := row.Run()
	if err != nil {
		return nil, err
	}
	granted, err := l.Lease()
	if err != nil {
		return nil, err
	}
	return &runstore.Claim{Run: run, Lease: granted}, nil
}

// RenewLease implements runstore.Store: one guarded UPDATE.
func (s *Store) RenewLease(ctx context.Context, runID string, f runstore.Fence, lease time.Duration, now time.Time) (runstore.Lease, error) {
	if lease <= 0 {
		return runstore.Lease{}, s.errorf("renew_lease", fmt.Errorf("%w: lease must be longer than zero, got %v", runstore.ErrInvalidArgument, lease))
	}
	var out runstore.LeaseRow
	err := s.write(ctx, func(c *sql.Conn) error {
		args := append(fenceArgs(runID, f, runstore.FormatTime(now)), sql.Named("expires", runstore.FormatTime(now.Add(lease))))
		var err error
		out, err = scanLease(c.QueryRowContext(ctx, s.st.RenewLease, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: run %q, worker %q, token %d", runstore.ErrStaleLease, runID, f.Worker, f.Token)
		}
		return err
	})
	if err != nil {
		return runstore.Lease{}, s.errorf("renew_lease", err)
	}
	return out.Lease()
}

// AssertFencingToken implements runstore.Store; it reads only.
func (s *Store) AssertFencingToken(ctx context.Context, runID string, f runstore.Fence, now time.Time) error {
	return s.errorf("assert_fencing_token", requireFence(ctx, s.db, s.st.FenceAssert, runID, f, runstore.FormatTime(now)))
}

// CommitCheckpoint implements runstore.Store.
func (s *Store) CommitCheckpoint(ctx context.Context, cp runstore.Checkpoint, f runstore.Fence, expected int64) (runstore.Run, error) {
	row, err := runstore.PrepareCheckpoint(cp)
	if err != nil {
		return runstore.Run{}, s.errorf("commit_checkpoint", err)
	}
	var out runstore.RunRow
	err = s.write(ctx, func(c *sql.Conn) error {
		if err := requireFence(ctx, c, s.st.FenceCommit, cp.RunID, f, row.CreatedAt); err != nil {
			return err
		}
		cur, err := s.runAt(ctx, c, cp.RunID, expected)
		if err != nil {
			return err
		}
		if cur.Status != runstore.Running {
			return fmt.Errorf("%w: checkpoint requires a running run, run %q is %s", runstore.ErrConflict, cur.ID, cur.Status)
		}
		if err := s.insertCheckpoint(ctx, c, row); err != nil {
			return err
		}
		res, err := c.ExecContext(ctx, `UPDATE runs SET state_json = ?, next_nodes_json = ?, updated_at = ?,
			version = version + 1 WHERE id = ? AND version = ?`, row.State, row.NextNodes, row.CreatedAt, cur.ID, cur.Version)
		if err := oneRow(res, err, cur.ID); err != nil {
			return err
		}
		out, err = runRow(ctx, c, cur.ID)
		return err
	})
	if err != nil {
		return runstore.Run{}, s.errorf("commit_checkpoint", err)
	}
	return out.Run()
}

// FinishClaim implements runstore.Store.
func (s *Store) FinishClaim(ctx context.Context, req runstore.Finish) (runstore.Run, error) {
	if !req.Target.Known() {
		return runstore.Run{}, s.errorf("finish_claim", fmt.Errorf("%w: unknown status %q", runstore.ErrInvalidArgument, req.Target))
	}
	data, err := runstore.FinishData(req)
	if err != nil {
		return runstore.Run{}, s.errorf("finish_claim", err)
	}
	at := runstore.FormatTime(req.Now)
	var out runstore.RunRow
	err = s.write(ctx, func(c *sql.Conn) error {
		if err := requireFence(ctx, c, s.st.FenceFinish, req.RunID, req.Fence, at); err != nil {
			return err
		}
		cur, err := s.runAt(ctx, c, req.RunID, req.ExpectedVersion)
		if err != nil {
			return err
		}
		if err := runstore.AssertTransition(cur.Status, req.Target); err != nil {
			return err
		}
		if err := setStatus(ctx, c, cur, req.Target, at); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, `UPDATE run_leases SET active = 0, updated_at = ? WHERE run_id = ?`, at, cur.ID); err != nil {
			return err
		}
		if err := s.appendEvent(ctx, c, cur.ID, runstore.FinishEventType(req), data, at); err != nil {
			return err
		}
		out, err = runRow(ctx, c, cur.ID)
		return err
	})
	if err != nil {
		return runstore.Run{}, s.errorf("finish_claim", err)
	}
	return out.Run()
}

// expiredLease is one row of the requeue sweep.
type expiredLease struct {
	run    runstore.RunRow
	token  int64
	status runstore.Status
}

// RequeueExpiredLeases implements runstore.Store: the whole sweep is one
// transaction.
func (s *Store) RequeueExpiredLeases(ctx context.Context, now time.Time) ([]string, error) {
	at := runstore.FormatTime(now)
	requeued := []string{}
	err := s.write(ctx, func(c *sql.Conn) error {
		due, err := queryAll(ctx, c, func(sc scanner) (expiredLease, error) {
			var e expiredLease
			var status string
			err := sc.Scan(&e.run.ID, &e.token, &status, &e.run.Version)
			e.status = runstore.Status(status)
			return e, err
		}, s.st.ExpiredLeases, sql.Named("now", at))
		if err != nil {
			return err
		}
		for _, e := range due {
			if e.status != runstore.Running {
				// As the seed: deactivated, updated_at untouched.
				if _, err := c.ExecContext(ctx, `UPDATE run_leases SET active = 0 WHERE run_id = ?`, e.run.ID); err != nil {
					return err
				}
				continue
			}
			if err := setStatus(ctx, c, e.run, runstore.Queued, at); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, s.st.RequeueEndLease, sql.Named("run", e.run.ID), sql.Named("now", at)); err != nil {
				return err
			}
			if err := s.appendEvent(ctx, c, e.run.ID, runstore.EventLeaseExpired, runstore.LeaseExpiredData(e.token), at); err != nil {
				return err
			}
			requeued = append(requeued, e.run.ID)
		}
		return nil
	})
	if err != nil {
		return nil, s.errorf("requeue_expired_leases", err)
	}
	return requeued, nil
}
