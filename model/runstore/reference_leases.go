package runstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// checkClaimArgs rejects an empty worker id or a lease that is not positive.
func checkClaimArgs(worker string, lease time.Duration) error {
	if strings.TrimSpace(worker) == "" {
		return fmt.Errorf("%w: worker id must not be empty", ErrInvalidArgument)
	}
	if lease <= 0 {
		return fmt.Errorf("%w: lease must be longer than zero, got %v", ErrInvalidArgument, lease)
	}
	return nil
}

// checkTarget rejects a status the table does not know.
func checkTarget(s Status) error {
	if !s.Known() {
		return fmt.Errorf("%w: unknown status %q", ErrInvalidArgument, s)
	}
	return nil
}

// ClaimNext implements Store.
func (r *Reference) ClaimNext(_ context.Context, worker string, lease time.Duration, now time.Time) (*Claim, error) {
	if err := checkClaimArgs(worker, lease); err != nil {
		return nil, err
	}
	at := FormatTime(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	var next *RunRow
	for _, row := range r.st.runs {
		if row.Status != Queued {
			continue
		}
		if next == nil || claimOrder(row, *next) < 0 {
			next = &row
		}
	}
	if next == nil {
		return nil, nil
	}
	row := bump(*next, Running, at)
	l, had := r.st.leases[row.ID]
	if !had {
		l = LeaseRow{ID: LeaseID(row.ID), RunID: row.ID, CreatedAt: at}
	}
	l.Holder, l.ExpiresAt, l.Token, l.Active, l.UpdatedAt = worker, FormatTime(now.Add(lease)), l.Token+1, true, at
	r.st.runs[row.ID] = row
	r.st.leases[row.ID] = l
	r.appendEvent(row.ID, EventClaimed, ClaimedData(worker, l.Token), at)
	run, err := row.Run()
	if err != nil {
		return nil, err
	}
	granted, err := l.Lease()
	if err != nil {
		return nil, err
	}
	return &Claim{Run: run, Lease: granted}, nil
}

// claimOrder orders queued runs for claim_next: highest priority, then
// oldest, then lowest id.
func claimOrder(a, b RunRow) int {
	return cmp.Or(cmp.Compare(b.Priority, a.Priority), compareCreated(a, b))
}

// requiredLease returns the run's lease if f holds it at now, else
// ErrStaleLease. r.mu must be held.
func (r *Reference) requiredLease(runID string, f Fence, now string) (LeaseRow, error) {
	l, ok := r.st.leases[runID]
	if !ok || !l.Holds(f, now) {
		return LeaseRow{}, fmt.Errorf("%w: run %q, worker %q, token %d", ErrStaleLease, runID, f.Worker, f.Token)
	}
	return l, nil
}

// RenewLease implements Store.
func (r *Reference) RenewLease(_ context.Context, runID string, f Fence, lease time.Duration, now time.Time) (Lease, error) {
	if lease <= 0 {
		return Lease{}, fmt.Errorf("%w: lease must be longer than zero, got %v", ErrInvalidArgument, lease)
	}
	at := FormatTime(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	l, err := r.requiredLease(runID, f, at)
	if err != nil {
		return Lease{}, err
	}
	l.ExpiresAt, l.UpdatedAt = FormatTime(now.Add(lease)), at
	r.st.leases[runID] = l
	return l.Lease()
}

// AssertFencingToken implements Store.
func (r *Reference) AssertFencingToken(_ context.Context, runID string, f Fence, now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.requiredLease(runID, f, FormatTime(now))
	return err
}

// CommitCheckpoint implements Store.
func (r *Reference) CommitCheckpoint(_ context.Context, cp Checkpoint, f Fence, expected int64) (Run, error) {
	row, err := PrepareCheckpoint(cp)
	if err != nil {
		return Run{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.requiredLease(cp.RunID, f, row.CreatedAt); err != nil {
		return Run{}, err
	}
	run, err := r.runAt(cp.RunID, expected)
	if err != nil {
		return Run{}, err
	}
	if run.Status != Running {
		return Run{}, fmt.Errorf("%w: checkpoint requires a running run, run %q is %s", ErrConflict, run.ID, run.Status)
	}
	if err := r.checkCheckpoint(row); err != nil {
		return Run{}, err
	}
	r.insertCheckpoint(row)
	run.State, run.NextNodes = row.State, row.NextNodes
	run = bump(run, run.Status, row.CreatedAt)
	r.st.runs[run.ID] = run
	return run.Run()
}

// FinishClaim implements Store.
func (r *Reference) FinishClaim(_ context.Context, req Finish) (Run, error) {
	if err := checkTarget(req.Target); err != nil {
		return Run{}, err
	}
	data, err := FinishData(req)
	if err != nil {
		return Run{}, err
	}
	at := FormatTime(req.Now)
	r.mu.Lock()
	defer r.mu.Unlock()
	l, err := r.requiredLease(req.RunID, req.Fence, at)
	if err != nil {
		return Run{}, err
	}
	run, err := r.runAt(req.RunID, req.ExpectedVersion)
	if err != nil {
		return Run{}, err
	}
	if err := AssertTransition(run.Status, req.Target); err != nil {
		return Run{}, err
	}
	run = bump(run, req.Target, at)
	l.Active, l.UpdatedAt = false, at
	r.st.runs[run.ID] = run
	r.st.leases[run.ID] = l
	r.appendEvent(run.ID, FinishEventType(req), data, at)
	return run.Run()
}

// RequeueExpiredLeases implements Store.
func (r *Reference) RequeueExpiredLeases(_ context.Context, now time.Time) ([]string, error) {
	at := FormatTime(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	var expired []LeaseRow
	for _, l := range r.st.leases {
		if l.Active && l.ExpiresAt <= at {
			expired = append(expired, l)
		}
	}
	slices.SortFunc(expired, func(a, b LeaseRow) int {
		return cmp.Or(strings.Compare(a.ExpiresAt, b.ExpiresAt), strings.Compare(a.RunID, b.RunID))
	})
	requeued := []string{}
	for _, l := range expired {
		run := r.st.runs[l.RunID]
		if run.Status != Running {
			// The seed deactivates such a lease without touching updated_at.
			l.Active = false
			r.st.leases[l.RunID] = l
			continue
		}
		r.st.runs[run.ID] = bump(run, Queued, at)
		l.Active, l.UpdatedAt = false, at
		r.st.leases[l.RunID] = l
		r.appendEvent(run.ID, EventLeaseExpired, LeaseExpiredData(l.Token), at)
		requeued = append(requeued, run.ID)
	}
	return requeued, nil
}
