package runstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Reference is the executable specification of the run store: an in-memory
// Store that does exactly what docs/CONTRACT.md §2 and the seed say, one operation
// at a time under a lock. It is also the `runs+memory:` backend. Its tables
// are kept in Dump form, so a dump is a copy and a comparison is string
// equality.
type Reference struct {
	mu sync.Mutex
	st refState
}

type refState struct {
	runs        map[string]RunRow
	events      map[string][]EventRow      // per run, ascending sequence
	checkpoints map[string][]CheckpointRow // per run, ascending sequence
	interrupts  map[string]InterruptRow
	leases      map[string]LeaseRow // by run id
}

var (
	_ Store    = (*Reference)(nil)
	_ Dumper   = (*Reference)(nil)
	_ Resetter = (*Reference)(nil)
)

// NewReference returns an empty reference store.
func NewReference() *Reference { return &Reference{st: emptyState()} }

func emptyState() refState {
	return refState{
		runs: map[string]RunRow{}, events: map[string][]EventRow{}, checkpoints: map[string][]CheckpointRow{},
		interrupts: map[string]InterruptRow{}, leases: map[string]LeaseRow{},
	}
}

// Reset empties every table.
func (r *Reference) Reset(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st = emptyState()
	return nil
}

// Close does nothing; the tables stay readable.
func (r *Reference) Close() error { return nil }

// Dump returns a sorted copy of the five tables.
func (r *Reference) Dump(context.Context) (*Dump, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := &Dump{}
	d.Runs = slices.Collect(maps.Values(r.st.runs))
	for _, evs := range r.st.events {
		d.Events = append(d.Events, evs...)
	}
	for _, cps := range r.st.checkpoints {
		d.Checkpoints = append(d.Checkpoints, cps...)
	}
	d.Interrupts = slices.Collect(maps.Values(r.st.interrupts))
	d.Leases = slices.Collect(maps.Values(r.st.leases))
	d.Sort()
	return d, nil
}

// CreateRun implements Store.
func (r *Reference) CreateRun(_ context.Context, req NewRun) (Run, error) {
	row, err := PrepareRun(req)
	if err != nil {
		return Run{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if row.IdempotencyKey != nil {
		for _, old := range r.st.runs {
			if old.TenantID == row.TenantID && old.IdempotencyKey != nil && *old.IdempotencyKey == *row.IdempotencyKey {
				if old.Fingerprint != row.Fingerprint {
					return Run{}, fmt.Errorf("%w: idempotency key %q was already used for a different request", ErrConflict, *row.IdempotencyKey)
				}
				return old.Run()
			}
		}
	}
	if _, ok := r.st.runs[row.ID]; ok {
		return Run{}, fmt.Errorf("%w: run %q already exists", ErrConflict, row.ID)
	}
	for _, old := range r.st.runs {
		if old.SessionID == row.SessionID && old.Status.Active() {
			return Run{}, fmt.Errorf("%w: session %q already has active run %q", ErrConflict, row.SessionID, old.ID)
		}
	}
	r.st.runs[row.ID] = row
	r.appendEvent(row.ID, EventCreated, CreatedData(), row.CreatedAt)
	return row.Run()
}

// GetRun implements Store.
func (r *Reference) GetRun(_ context.Context, id string) (Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	row, ok := r.st.runs[id]
	if !ok {
		return Run{}, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	return row.Run()
}

// ListRuns implements Store.
func (r *Reference) ListRuns(_ context.Context, f ListFilter) ([]Run, error) {
	if f.Limit < 0 {
		return nil, fmt.Errorf("%w: limit must not be negative, got %d", ErrInvalidArgument, f.Limit)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var after *RunRow
	if f.After != "" {
		row, ok := r.st.runs[f.After]
		if !ok || row.TenantID != f.TenantID {
			return nil, fmt.Errorf("%w: cursor run %q in tenant %q", ErrNotFound, f.After, f.TenantID)
		}
		after = &row
	}
	var rows []RunRow
	for _, row := range r.st.runs {
		if row.TenantID != f.TenantID || (f.SessionID != "" && row.SessionID != f.SessionID) {
			continue
		}
		if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, row.Status) {
			continue
		}
		if after != nil && compareCreated(row, *after) <= 0 {
			continue
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, compareCreated)
	if f.Limit > 0 && len(rows) > f.Limit {
		rows = rows[:f.Limit]
	}
	out := []Run{}
	for _, row := range rows {
		run, err := row.Run()
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

// compareCreated orders runs by (created_at, id).
func compareCreated(a, b RunRow) int {
	return cmp.Or(strings.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// TransitionRun implements Store.
func (r *Reference) TransitionRun(_ context.Context, req Transition) (Run, error) {
	if err := checkTarget(req.Target); err != nil {
		return Run{}, err
	}
	var state string
	if req.State != nil {
		s, err := Object(req.State, "state")
		if err != nil {
			return Run{}, err
		}
		state = s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	row, err := r.runAt(req.RunID, req.ExpectedVersion)
	if err != nil {
		return Run{}, err
	}
	if err := AssertTransition(row.Status, req.Target); err != nil {
		return Run{}, err
	}
	from := row.Status
	if req.State != nil {
		row.State = state
	}
	if req.NextNodes != nil {
		row.NextNodes = StringList(req.NextNodes)
	}
	row = bump(row, req.Target, FormatTime(req.Now))
	r.st.runs[row.ID] = row
	r.appendEvent(row.ID, EventStateChanged, StateChangedData(from, req.Target), FormatTime(req.Now))
	return row.Run()
}

// runAt returns the run, ErrNotFound, or ErrConflict when it is not at
// version expected. r.mu must be held.
func (r *Reference) runAt(id string, expected int64) (RunRow, error) {
	row, ok := r.st.runs[id]
	if !ok {
		return RunRow{}, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	if row.Version != expected {
		return RunRow{}, fmt.Errorf("%w: run %q version conflict: expected %d, found %d", ErrConflict, id, expected, row.Version)
	}
	return row, nil
}

// bump returns row in status at the next version, updated at now.
func bump(row RunRow, status Status, now string) RunRow {
	row.Status, row.UpdatedAt, row.Version = status, now, row.Version+1
	return row
}

// ListRunEvents implements Store.
func (r *Reference) ListRunEvents(_ context.Context, runID string, after int64, limit int) ([]RunEvent, error) {
	if after < 0 || limit < 0 {
		return nil, fmt.Errorf("%w: after and limit must not be negative, got %d and %d", ErrInvalidArgument, after, limit)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []RunEvent{}
	for _, e := range r.st.events[runID] {
		if e.Sequence <= after {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		ev, err := e.Event()
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// AppendRunEvent implements Store.
func (r *Reference) AppendRunEvent(_ context.Context, runID, typ string, data json.RawMessage, now time.Time) (RunEvent, error) {
	d, err := Object(data, "event data")
	if err != nil {
		return RunEvent{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.st.runs[runID]; !ok {
		return RunEvent{}, fmt.Errorf("%w: run %q", ErrNotFound, runID)
	}
	return r.appendEvent(runID, typ, d, FormatTime(now)).Event()
}

// appendEvent appends the run's next event. r.mu must be held.
func (r *Reference) appendEvent(runID, typ, data, now string) EventRow {
	evs := r.st.events[runID]
	e := EventRow{RunID: runID, Sequence: int64(len(evs)) + 1, Type: typ, Data: data, CreatedAt: now}
	r.st.events[runID] = append(evs, e)
	return e
}

// AppendCheckpoint implements Store.
func (r *Reference) AppendCheckpoint(_ context.Context, cp Checkpoint) error {
	row, err := PrepareCheckpoint(cp)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.st.runs[cp.RunID]; !ok {
		return fmt.Errorf("%w: run %q", ErrNotFound, cp.RunID)
	}
	if err := r.checkCheckpoint(row); err != nil {
		return err
	}
	r.insertCheckpoint(row)
	return nil
}

// checkCheckpoint rejects a checkpoint whose sequence is not max+1 or whose
// id is taken. r.mu must be held.
//
// Decision: a taken checkpoint id is ErrConflict (the seed lets the
// IntegrityError escape).
func (r *Reference) checkCheckpoint(row CheckpointRow) error {
	if want := int64(len(r.st.checkpoints[row.RunID])) + 1; row.Sequence != want {
		return fmt.Errorf("%w: checkpoint sequence must be %d, got %d", ErrConflict, want, row.Sequence)
	}
	for _, cps := range r.st.checkpoints {
		for _, c := range cps {
			if c.ID == row.ID {
				return fmt.Errorf("%w: checkpoint %q already exists", ErrConflict, row.ID)
			}
		}
	}
	return nil
}

// insertCheckpoint stores a checked checkpoint and logs it. r.mu must be held.
func (r *Reference) insertCheckpoint(row CheckpointRow) {
	r.st.checkpoints[row.RunID] = append(r.st.checkpoints[row.RunID], row)
	r.appendEvent(row.RunID, EventCheckpointCreated, CheckpointData(row.ID, row.Sequence), row.CreatedAt)
}

// LatestCheckpoint implements Store.
func (r *Reference) LatestCheckpoint(_ context.Context, runID string) (*Checkpoint, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cps := r.st.checkpoints[runID]
	if len(cps) == 0 {
		return nil, nil
	}
	cp, err := cps[len(cps)-1].Checkpoint()
	if err != nil {
		return nil, err
	}
	return &cp, nil
}

// ListCheckpoints implements Store.
func (r *Reference) ListCheckpoints(_ context.Context, runID string) ([]Checkpoint, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []Checkpoint{}
	for _, row := range r.st.checkpoints[runID] {
		cp, err := row.Checkpoint()
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}
