package runstore

import (
	"encoding/json"
	"time"
)

// Run is one agent run. JSON fields come back canonical (model.CanonicalJSON)
// and times in UTC, so two stores that hold the same run return equal values.
type Run struct {
	ID         string
	TenantID   string
	SessionID  string
	PlanID     string
	RevisionID string
	// IdempotencyKey is "" when the run was created without one.
	IdempotencyKey string
	Status         Status
	Priority       int64
	State          json.RawMessage // a JSON object
	NextNodes      []string
	Context        json.RawMessage // a JSON object
	// Version starts at 1 and grows by one with every mutation of the row.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RunEvent is one entry of a run's event log; Sequence is 1, 2, 3… per run.
type RunEvent struct {
	RunID     string
	Sequence  int64
	Type      string
	Data      json.RawMessage // a JSON object
	CreatedAt time.Time
}

// Checkpoint is a saved point of a run; Sequence is 1, 2, 3… per run.
type Checkpoint struct {
	ID                string
	RunID             string
	Sequence          int64
	PlanHash          string
	State             json.RawMessage // a JSON object
	NextNodes         []string
	PendingInterrupts []string
	EffectWatermark   int64
	// CreatedAt is the checkpoint's time, and the time input of the
	// operation that stores it (commit_checkpoint sets the run's
	// updated_at to it).
	CreatedAt time.Time
}

// Lease is a run's lease row. There is at most one per run; a new claim
// replaces holder and expiry and takes the next fencing token.
type Lease struct {
	ID        string
	RunID     string
	Holder    string
	ExpiresAt time.Time
	Token     int64
	Active    bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Claim is what claim_next grants: the run, now running, and its lease.
type Claim struct {
	Run   Run
	Lease Lease
}

// Fence identifies a lease holder: the worker and the fencing token its
// claim was granted.
type Fence struct {
	Worker string
	Token  int64
}

// DecisionKind is how an interrupt was decided.
type DecisionKind string

// The decision kinds the contract names; a store keeps any non-empty kind.
const (
	Approve DecisionKind = "approve"
	Reject  DecisionKind = "reject"
)

// SystemActor is the actor of a decision made by expire_interrupts.
//
// Decision: the seed writes "openrath-system"; the actor is a constant of
// the contract here, so both sides of a comparison write the same one.
const SystemActor = "system"

// ExpiredReason is the reason of a decision made by expire_interrupts.
const ExpiredReason = "interrupt deadline expired"

// Decision is the answer to an interrupt.
type Decision struct {
	Kind    DecisionKind
	ActorID string
	Reason  string
	Payload json.RawMessage // a JSON object
}

// Interrupt parks a run until it is decided or expires.
type Interrupt struct {
	ID      string
	RunID   string
	Kind    string
	Request json.RawMessage // a JSON object
	// CreatedAt is the interrupt's time, and the time input of
	// create_interrupt.
	CreatedAt time.Time
	// ExpiresAt, when set, is when expire_interrupts rejects it.
	ExpiresAt *time.Time
	Decision  *Decision
	DecidedAt *time.Time
}

// Event types the store writes itself.
const (
	EventCreated           = "run.created"
	EventStateChanged      = "run.state.changed"
	EventCheckpointCreated = "run.checkpoint.created"
	EventClaimed           = "run.claimed"
	EventLeaseExpired      = "run.lease.expired"
	EventExecutionDone     = "run.execution.completed"
	EventInterruptCreated  = "run.interrupt.created"
	EventInterruptDecided  = "run.interrupt.decided"
	EventInterruptExpired  = "run.interrupt.expired"
)
