package runstore

import (
	"context"
	"encoding/json"
	"time"
)

// Store is the run-store contract. Every backend under test implements it;
// Reference is its executable specification. Every mutation is one
// transaction: it happens whole or not at all.
//
// Decision: docs/CONTRACT.md §2 says every mutation bumps the run's version; the
// seed's append_run_event and append_checkpoint do not touch the run row,
// and where they disagree the seed wins, so those two leave the version
// alone. Every other write to a run bumps it by exactly one.
//
// Decision: a request's arguments are checked before any stored state
// (ErrInvalidArgument first); after that each operation reports the first
// failure in the seed's order, which matters when several apply: the fenced
// operations check the lease before the run exists (a missing run is
// ErrStaleLease), then the version, then the status table.
//
// Decision: as in the seed, transition_run does not touch the lease; a run
// moved out of running by it keeps an active lease until
// requeue_expired_leases deactivates it (without requeueing the run), and
// the holder may renew it meanwhile. commit_checkpoint still requires a
// running run and finish_claim a legal transition.
//
// Every method may be called from several goroutines at once unless a
// backend says otherwise in its package documentation.
type Store interface {
	// CreateRun inserts a queued run at version 1 with a run.created event.
	// With an idempotency key already used in the tenant it returns the
	// stored run if the request's fingerprint matches, ErrConflict if not.
	// A second active run in the session, or a taken id, is ErrConflict.
	CreateRun(ctx context.Context, req NewRun) (Run, error)
	// GetRun returns the run, or ErrNotFound.
	GetRun(ctx context.Context, id string) (Run, error)
	// ListRuns returns a tenant's runs ordered by (created_at, id).
	ListRuns(ctx context.Context, f ListFilter) ([]Run, error)
	// TransitionRun moves a run at ExpectedVersion to Target (optionally
	// replacing state and next nodes), bumps its version and logs
	// run.state.changed.
	TransitionRun(ctx context.Context, req Transition) (Run, error)

	// ListRunEvents returns a run's events with sequence > after, ascending;
	// limit 0 means all.
	ListRunEvents(ctx context.Context, runID string, after int64, limit int) ([]RunEvent, error)
	// AppendRunEvent appends an event numbered max+1. The run's version is
	// unchanged (the seed's append does not touch the run row).
	AppendRunEvent(ctx context.Context, runID, typ string, data json.RawMessage, now time.Time) (RunEvent, error)
	// AppendCheckpoint stores cp, whose Sequence must be max+1, and logs
	// run.checkpoint.created; the run row is unchanged.
	AppendCheckpoint(ctx context.Context, cp Checkpoint) error
	// LatestCheckpoint returns the checkpoint with the highest sequence,
	// or nil.
	LatestCheckpoint(ctx context.Context, runID string) (*Checkpoint, error)
	// ListCheckpoints returns a run's checkpoints by ascending sequence.
	ListCheckpoints(ctx context.Context, runID string) ([]Checkpoint, error)

	// ClaimNext takes the queued run of highest priority, oldest first
	// (then lowest id), marks it running and grants worker a lease until
	// now+lease whose fencing token is the run's previous token + 1 (1 for
	// the first claim). It returns nil when no run is queued.
	ClaimNext(ctx context.Context, worker string, lease time.Duration, now time.Time) (*Claim, error)
	// RenewLease extends the lease to now+lease if f holds it (active,
	// same holder and token, expires_at > now); otherwise ErrStaleLease.
	RenewLease(ctx context.Context, runID string, f Fence, lease time.Duration, now time.Time) (Lease, error)
	// AssertFencingToken returns ErrStaleLease unless f holds the lease at
	// now. It writes nothing.
	AssertFencingToken(ctx context.Context, runID string, f Fence, now time.Time) error
	// CommitCheckpoint is AppendCheckpoint by the lease holder of a running
	// run at expectedVersion, which also stores the checkpoint's state and
	// next nodes on the run and bumps its version; the fence is checked at
	// cp.CreatedAt.
	CommitCheckpoint(ctx context.Context, cp Checkpoint, f Fence, expectedVersion int64) (Run, error)
	// FinishClaim moves the holder's run to the request's target,
	// deactivates the lease and logs the request's event.
	FinishClaim(ctx context.Context, req Finish) (Run, error)
	// RequeueExpiredLeases returns every running run whose active lease
	// expired (expires_at <= now) to queued and deactivates its lease; an
	// active lease of a run that is not running is only deactivated. It
	// returns the requeued run ids, by (expires_at, run id).
	RequeueExpiredLeases(ctx context.Context, now time.Time) ([]string, error)

	// CreateInterrupt stores a pending interrupt and moves its run, at
	// expectedVersion, to waiting; the run's lease is deactivated.
	CreateInterrupt(ctx context.Context, in Interrupt, expectedVersion int64) (Run, error)
	// GetInterrupt returns the interrupt, or ErrNotFound.
	GetInterrupt(ctx context.Context, id string) (Interrupt, error)
	// ListInterrupts returns a tenant's interrupts (pending only, if asked)
	// ordered by (created_at, id).
	ListInterrupts(ctx context.Context, tenantID string, pendingOnly bool) ([]Interrupt, error)
	// DecideInterrupt records the decision, once, and moves the run at
	// expectedVersion to queued.
	DecideInterrupt(ctx context.Context, id string, d Decision, expectedVersion int64, now time.Time) (Run, error)
	// ExpireInterrupts rejects every pending interrupt with expires_at <=
	// now (by expires_at, id) and times its run out if it is waiting. It
	// returns the expired interrupt ids.
	ExpireInterrupts(ctx context.Context, now time.Time) ([]string, error)

	// Close releases the backend's resources.
	Close() error
}

// Dumper is implemented by stores that can show all five tables.
type Dumper interface {
	Dump(ctx context.Context) (*Dump, error)
}

// Resetter is implemented by stores that can empty every table in place.
type Resetter interface {
	Reset(ctx context.Context) error
}

// NewRun is a create_run request.
type NewRun struct {
	ID         string
	TenantID   string
	SessionID  string
	PlanID     string
	RevisionID string
	// IdempotencyKey, when not "", makes the create idempotent per tenant.
	IdempotencyKey string
	Priority       int64
	State          json.RawMessage // a JSON object; nil stands for {}
	NextNodes      []string
	Context        json.RawMessage // a JSON object; nil stands for {}
	// Now is the run's created_at and updated_at.
	Now time.Time
}

// ListFilter selects list_runs' rows.
type ListFilter struct {
	TenantID string
	// SessionID, when not "", keeps that session's runs.
	SessionID string
	// Statuses, when not empty, keeps runs in any of them.
	Statuses []Status
	// After, when not "", starts after that run of the tenant in
	// (created_at, id) order; an unknown run is ErrNotFound.
	After string
	// Limit caps the rows; 0 means no cap, a negative limit is
	// ErrInvalidArgument.
	//
	// Decision: the seed's limit is None or >= 1; 0 stands for None here.
	Limit int
}

// Transition is a transition_run request.
type Transition struct {
	RunID           string
	ExpectedVersion int64
	Target          Status
	// State, when not nil, replaces the run's state.
	State json.RawMessage
	// NextNodes, when not nil, replaces the run's next nodes.
	NextNodes []string
	Now       time.Time
}

// Finish is a finish_claim request.
type Finish struct {
	RunID           string
	Fence           Fence
	ExpectedVersion int64
	Target          Status
	// EventType is the event logged; "" means run.execution.completed.
	EventType string
	// EventData is the event's data; nil means {"status": target}.
	EventData json.RawMessage
	Now       time.Time
}
