package runstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// CreateInterrupt implements Store.
func (r *Reference) CreateInterrupt(_ context.Context, in Interrupt, expected int64) (Run, error) {
	row, err := PrepareInterrupt(in)
	if err != nil {
		return Run{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	run, err := r.runAt(in.RunID, expected)
	if err != nil {
		return Run{}, err
	}
	if err := AssertTransition(run.Status, Waiting); err != nil {
		return Run{}, err
	}
	// Decision: a taken interrupt id is ErrConflict (the seed lets the
	// IntegrityError escape).
	if _, ok := r.st.interrupts[row.ID]; ok {
		return Run{}, fmt.Errorf("%w: interrupt %q already exists", ErrConflict, row.ID)
	}
	r.st.interrupts[row.ID] = row
	run = bump(run, Waiting, row.CreatedAt)
	r.st.runs[run.ID] = run
	if l, ok := r.st.leases[run.ID]; ok {
		l.Active, l.UpdatedAt = false, row.CreatedAt
		r.st.leases[run.ID] = l
	}
	r.appendEvent(run.ID, EventInterruptCreated, InterruptCreatedData(row.ID, row.Kind), row.CreatedAt)
	return run.Run()
}

// GetInterrupt implements Store.
func (r *Reference) GetInterrupt(_ context.Context, id string) (Interrupt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	row, ok := r.st.interrupts[id]
	if !ok {
		return Interrupt{}, fmt.Errorf("%w: interrupt %q", ErrNotFound, id)
	}
	return row.Interrupt()
}

// ListInterrupts implements Store.
func (r *Reference) ListInterrupts(_ context.Context, tenantID string, pendingOnly bool) ([]Interrupt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rows []InterruptRow
	for _, in := range r.st.interrupts {
		if run, ok := r.st.runs[in.RunID]; !ok || run.TenantID != tenantID {
			continue
		}
		if pendingOnly && in.DecidedAt != nil {
			continue
		}
		rows = append(rows, in)
	}
	slices.SortFunc(rows, func(a, b InterruptRow) int {
		return cmp.Or(strings.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	out := []Interrupt{}
	for _, row := range rows {
		in, err := row.Interrupt()
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// DecideInterrupt implements Store.
//
// Decision: any decision kind, reject included, moves the run to queued, as
// the seed does; the worker that claims it next reads the decision.
func (r *Reference) DecideInterrupt(_ context.Context, id string, d Decision, expected int64, now time.Time) (Run, error) {
	cols, err := PrepareDecision(d, now)
	if err != nil {
		return Run{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	in, ok := r.st.interrupts[id]
	if !ok {
		return Run{}, fmt.Errorf("%w: interrupt %q", ErrNotFound, id)
	}
	if in.DecisionKind != nil {
		return Run{}, fmt.Errorf("%w: interrupt %q was already decided", ErrConflict, id)
	}
	run, err := r.runAt(in.RunID, expected)
	if err != nil {
		return Run{}, err
	}
	if err := AssertTransition(run.Status, Queued); err != nil {
		return Run{}, err
	}
	r.st.interrupts[id] = in.Decide(cols)
	run = bump(run, Queued, cols.DecidedAt)
	r.st.runs[run.ID] = run
	r.appendEvent(run.ID, EventInterruptDecided, InterruptDecidedData(id, d.Kind, d.ActorID), cols.DecidedAt)
	return run.Run()
}

// ExpireInterrupts implements Store.
//
// Decision: the run is re-read for every interrupt. The seed reads each
// run's status and version once, in the sweep's SELECT, so a run with two
// overdue interrupts fails the second update with a version conflict and the
// whole sweep rolls back, forever; here the first times the run out and the
// second is only rejected. Every expired interrupt logs
// run.interrupt.expired on its run, whatever the run's status (the seed's
// indentation does not say).
func (r *Reference) ExpireInterrupts(_ context.Context, now time.Time) ([]string, error) {
	cols := ExpiredDecision(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	var due []InterruptRow
	for _, in := range r.st.interrupts {
		if in.DecidedAt == nil && in.ExpiresAt != nil && *in.ExpiresAt <= cols.DecidedAt {
			due = append(due, in)
		}
	}
	slices.SortFunc(due, func(a, b InterruptRow) int {
		return cmp.Or(strings.Compare(*a.ExpiresAt, *b.ExpiresAt), strings.Compare(a.ID, b.ID))
	})
	ids := []string{}
	for _, in := range due {
		r.st.interrupts[in.ID] = in.Decide(cols)
		if run := r.st.runs[in.RunID]; run.Status == Waiting {
			r.st.runs[run.ID] = bump(run, TimedOut, cols.DecidedAt)
		}
		r.appendEvent(in.RunID, EventInterruptExpired, InterruptExpiredData(in.ID), cols.DecidedAt)
		ids = append(ids, in.ID)
	}
	return ids, nil
}
