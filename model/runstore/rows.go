package runstore

import (
	"encoding/json"
	"fmt"
	"time"
)

// RunRow is one row of runs, in canonical text form.
type RunRow struct {
	ID             string
	PlanID         string
	RevisionID     string
	SessionID      string
	TenantID       string
	Status         Status
	State          string // canonical JSON object
	NextNodes      string // canonical JSON array
	IdempotencyKey *string
	Context        string // canonical JSON object
	Priority       int64
	Fingerprint    string
	CreatedAt      string // TimeLayout
	UpdatedAt      string
	Version        int64
}

// EventRow is one row of run_events.
type EventRow struct {
	RunID     string
	Sequence  int64
	Type      string
	Data      string // canonical JSON object
	CreatedAt string
}

// CheckpointRow is one row of checkpoints.
type CheckpointRow struct {
	ID                string
	RunID             string
	Sequence          int64
	PlanHash          string
	State             string // canonical JSON object
	NextNodes         string // canonical JSON array
	PendingInterrupts string // canonical JSON array
	EffectWatermark   int64
	CreatedAt         string
}

// InterruptRow is one row of interrupts; the decision columns are nil
// while it is pending.
type InterruptRow struct {
	ID              string
	RunID           string
	Kind            string
	Request         string // canonical JSON object
	CreatedAt       string
	ExpiresAt       *string
	DecisionKind    *string
	DecisionActor   *string
	DecisionReason  *string
	DecisionPayload *string // canonical JSON object
	DecidedAt       *string
}

// LeaseRow is one row of run_leases.
type LeaseRow struct {
	ID        string
	RunID     string
	Holder    string
	ExpiresAt string
	Token     int64
	Active    bool
	CreatedAt string
	UpdatedAt string
}

// PrepareRun validates a create_run request and returns its row at version
// 1, status queued.
//
// Decision: the seed stores whatever status and version the caller's Run
// carries; here a created run is always queued at version 1, because a run
// created in any other status would skip claim_next (and its lease) or
// break the session rule.
func PrepareRun(req NewRun) (RunRow, error) {
	if req.ID == "" || req.TenantID == "" || req.SessionID == "" {
		return RunRow{}, fmt.Errorf("%w: a run needs an id, a tenant and a session", ErrInvalidArgument)
	}
	state, err := Object(req.State, "state")
	if err != nil {
		return RunRow{}, err
	}
	ctxJSON, err := Object(req.Context, "context")
	if err != nil {
		return RunRow{}, err
	}
	fp, err := Fingerprint(req)
	if err != nil {
		return RunRow{}, err
	}
	now := FormatTime(req.Now)
	row := RunRow{
		ID: req.ID, PlanID: req.PlanID, RevisionID: req.RevisionID, SessionID: req.SessionID, TenantID: req.TenantID,
		Status: Queued, State: state, NextNodes: StringList(req.NextNodes), Context: ctxJSON,
		Priority: req.Priority, Fingerprint: fp, CreatedAt: now, UpdatedAt: now, Version: 1,
	}
	// Decision: an empty idempotency key means none (NULL), so any number
	// of runs may be created without one.
	if req.IdempotencyKey != "" {
		k := req.IdempotencyKey
		row.IdempotencyKey = &k
	}
	return row, nil
}

// Run decodes the row.
func (r RunRow) Run() (Run, error) {
	nodes, err := parseStringList(r.NextNodes, "next_nodes")
	if err != nil {
		return Run{}, err
	}
	created, err := ParseTime(r.CreatedAt)
	if err != nil {
		return Run{}, err
	}
	updated, err := ParseTime(r.UpdatedAt)
	if err != nil {
		return Run{}, err
	}
	run := Run{
		ID: r.ID, TenantID: r.TenantID, SessionID: r.SessionID, PlanID: r.PlanID, RevisionID: r.RevisionID,
		Status: r.Status, Priority: r.Priority, State: json.RawMessage(r.State), NextNodes: nodes,
		Context: json.RawMessage(r.Context), Version: r.Version, CreatedAt: created, UpdatedAt: updated,
	}
	if r.IdempotencyKey != nil {
		run.IdempotencyKey = *r.IdempotencyKey
	}
	return run, nil
}

// Event decodes the row.
func (r EventRow) Event() (RunEvent, error) {
	t, err := ParseTime(r.CreatedAt)
	if err != nil {
		return RunEvent{}, err
	}
	return RunEvent{RunID: r.RunID, Sequence: r.Sequence, Type: r.Type, Data: json.RawMessage(r.Data), CreatedAt: t}, nil
}

// PrepareCheckpoint validates a checkpoint and returns its row.
func PrepareCheckpoint(cp Checkpoint) (CheckpointRow, error) {
	if cp.ID == "" {
		return CheckpointRow{}, fmt.Errorf("%w: a checkpoint needs an id", ErrInvalidArgument)
	}
	state, err := Object(cp.State, "checkpoint state")
	if err != nil {
		return CheckpointRow{}, err
	}
	return CheckpointRow{
		ID: cp.ID, RunID: cp.RunID, Sequence: cp.Sequence, PlanHash: cp.PlanHash, State: state,
		NextNodes: StringList(cp.NextNodes), PendingInterrupts: StringList(cp.PendingInterrupts),
		EffectWatermark: cp.EffectWatermark, CreatedAt: FormatTime(cp.CreatedAt),
	}, nil
}

// Checkpoint decodes the row.
func (r CheckpointRow) Checkpoint() (Checkpoint, error) {
	nodes, err := parseStringList(r.NextNodes, "next_nodes")
	if err != nil {
		return Checkpoint{}, err
	}
	pending, err := parseStringList(r.PendingInterrupts, "pending_interrupts")
	if err != nil {
		return Checkpoint{}, err
	}
	t, err := ParseTime(r.CreatedAt)
	if err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{
		ID: r.ID, RunID: r.RunID, Sequence: r.Sequence, PlanHash: r.PlanHash, State: json.RawMessage(r.State),
		NextNodes: nodes, PendingInterrupts: pending, EffectWatermark: r.EffectWatermark, CreatedAt: t,
	}, nil
}

// PrepareInterrupt validates a new interrupt and returns its pending row.
func PrepareInterrupt(in Interrupt) (InterruptRow, error) {
	if in.ID == "" || in.Kind == "" {
		return InterruptRow{}, fmt.Errorf("%w: an interrupt needs an id and a kind", ErrInvalidArgument)
	}
	req, err := Object(in.Request, "interrupt request")
	if err != nil {
		return InterruptRow{}, err
	}
	row := InterruptRow{ID: in.ID, RunID: in.RunID, Kind: in.Kind, Request: req, CreatedAt: FormatTime(in.CreatedAt)}
	if in.ExpiresAt != nil {
		s := FormatTime(*in.ExpiresAt)
		row.ExpiresAt = &s
	}
	return row, nil
}

// DecidedColumns are the decision columns an update writes.
type DecidedColumns struct {
	Kind, Actor, Reason, Payload, DecidedAt string
}

// PrepareDecision validates a decision made at now.
func PrepareDecision(d Decision, now time.Time) (DecidedColumns, error) {
	if d.Kind == "" {
		return DecidedColumns{}, fmt.Errorf("%w: a decision needs a kind", ErrInvalidArgument)
	}
	payload, err := Object(d.Payload, "decision payload")
	if err != nil {
		return DecidedColumns{}, err
	}
	return DecidedColumns{Kind: string(d.Kind), Actor: d.ActorID, Reason: d.Reason, Payload: payload, DecidedAt: FormatTime(now)}, nil
}

// ExpiredDecision is the decision expire_interrupts writes at now.
func ExpiredDecision(now time.Time) DecidedColumns {
	return DecidedColumns{Kind: string(Reject), Actor: SystemActor, Reason: ExpiredReason, Payload: "{}", DecidedAt: FormatTime(now)}
}

// Decide returns the row with the decision written.
func (r InterruptRow) Decide(c DecidedColumns) InterruptRow {
	r.DecisionKind, r.DecisionActor, r.DecisionReason = &c.Kind, &c.Actor, &c.Reason
	r.DecisionPayload, r.DecidedAt = &c.Payload, &c.DecidedAt
	return r
}

// Interrupt decodes the row.
func (r InterruptRow) Interrupt() (Interrupt, error) {
	created, err := ParseTime(r.CreatedAt)
	if err != nil {
		return Interrupt{}, err
	}
	in := Interrupt{ID: r.ID, RunID: r.RunID, Kind: r.Kind, Request: json.RawMessage(r.Request), CreatedAt: created}
	if r.ExpiresAt != nil {
		t, err := ParseTime(*r.ExpiresAt)
		if err != nil {
			return Interrupt{}, err
		}
		in.ExpiresAt = &t
	}
	if r.DecisionKind != nil {
		d := &Decision{Kind: DecisionKind(*r.DecisionKind), ActorID: deref(r.DecisionActor), Reason: deref(r.DecisionReason)}
		d.Payload = json.RawMessage(deref(r.DecisionPayload))
		in.Decision = d
	}
	if r.DecidedAt != nil {
		t, err := ParseTime(*r.DecidedAt)
		if err != nil {
			return Interrupt{}, err
		}
		in.DecidedAt = &t
	}
	return in, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Lease decodes the row.
func (r LeaseRow) Lease() (Lease, error) {
	exp, err := ParseTime(r.ExpiresAt)
	if err != nil {
		return Lease{}, err
	}
	created, err := ParseTime(r.CreatedAt)
	if err != nil {
		return Lease{}, err
	}
	updated, err := ParseTime(r.UpdatedAt)
	if err != nil {
		return Lease{}, err
	}
	return Lease{ID: r.ID, RunID: r.RunID, Holder: r.Holder, ExpiresAt: exp, Token: r.Token, Active: r.Active,
		CreatedAt: created, UpdatedAt: updated}, nil
}

// Holds reports whether f holds this lease at now (the string form of a
// time): active, same holder and token, and expires_at > now.
func (r LeaseRow) Holds(f Fence, now string) bool {
	return r.Active && r.Holder == f.Worker && r.Token == f.Token && r.ExpiresAt > now
}
