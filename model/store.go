package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultTraceMax is the trace ring's cap when none is configured.
const DefaultTraceMax = 200

// Config is what every backend is opened with.
type Config struct {
	// TraceMax caps the trace ring per execution; 0 means unbounded.
	TraceMax int
}

// DefaultConfig is the configuration the seeds ship with.
func DefaultConfig() Config { return Config{TraceMax: DefaultTraceMax} }

// Store is the execution-store contract. Every backend under test implements
// it; Reference is its executable specification.
//
// Every method may be called from several goroutines at once unless a backend
// says otherwise in its package documentation.
type Store interface {
	// Commit is the one atomic write per event. With old = exe.Version: an
	// absent row with old == 0 is inserted at version 1; a row at version old
	// is replaced at old+1; anything else is a *StoreConflict and nothing of
	// the batch is written. On success exe.Version becomes old+1 and, in the
	// same transaction, the emits are appended to the outbox, the processed
	// event id is recorded, the spawns are appended, the timer ops applied in
	// order and the trace step appended. On any error exe.Version stays old.
	Commit(ctx context.Context, exe *Execution, b Batch) error
	// Save is Commit with an empty batch.
	Save(ctx context.Context, exe *Execution) error
	// Load returns the stored execution, or nil when there is none.
	Load(ctx context.Context, id string) (*Execution, error)
	// LoadForEvent returns the execution and whether eventID is already
	// processed for it; a missing execution gives (nil, false).
	LoadForEvent(ctx context.Context, id, eventID string) (*Execution, bool, error)
	// ListExecutions returns one page of summaries ordered by id.
	ListExecutions(ctx context.Context, f ListFilter) (Page, error)
	// IsProcessed reports whether the dedupe ledger holds (id, eventID).
	IsProcessed(ctx context.Context, id, eventID string) (bool, error)
	// PendingOutbox returns every unacknowledged emit by ascending seq.
	PendingOutbox(ctx context.Context) ([]OutboxEntry, error)
	// AckOutbox removes one entry; an absent seq is a no-op.
	AckOutbox(ctx context.Context, seq int64) error
	// PendingSpawns returns every unacknowledged spawn intent by ascending seq.
	PendingSpawns(ctx context.Context) ([]SpawnEntry, error)
	// AckSpawn removes one spawn intent; an absent seq is a no-op.
	AckSpawn(ctx context.Context, seq int64) error
	// DueTimers returns every timer with fire_at <= now, soonest first.
	DueTimers(ctx context.Context, now float64) ([]DueTimer, error)
	// DeleteTimer deletes the timer only if it still holds fireAt, so that a
	// concurrent re-schedule survives a stale sweep.
	DeleteTimer(ctx context.Context, id, path string, fireAt float64) error
	// AppendTrace appends one trace step outside a commit, then trims the ring.
	AppendTrace(ctx context.Context, id string, entry json.RawMessage) error
	// ReadTrace returns the ring in ascending index order.
	ReadTrace(ctx context.Context, id string) ([]TraceEntry, error)
	// Close releases the backend's resources.
	Close() error
}

// Dumper is implemented by stores that can show all six tables, which the
// conformance suite compares with the reference model's.
type Dumper interface {
	Dump(ctx context.Context) (*Dump, error)
}

// Resetter is implemented by stores that can empty all six tables in place,
// so that one database can serve many test sequences (libSQL is unstable when
// a process opens many short-lived databases).
type Resetter interface {
	Reset(ctx context.Context) error
}

// TraceMaxSetter is implemented by stores whose trace cap can be changed after
// opening; a reset store then behaves as if opened with the new cap.
type TraceMaxSetter interface {
	SetTraceMax(n int)
}

// Batch is everything a commit writes besides the execution itself.
type Batch struct {
	Emits []Emit
	// ProcessedEventID, when set, is recorded in the dedupe ledger.
	ProcessedEventID *string
	Timers           []TimerOp
	Spawns           []Spawn
	// Trace, when set, is appended to the execution's trace ring; a JSON object.
	Trace json.RawMessage
}

// Emit is one event for the outbox, to TargetID (nil: no target).
type Emit struct {
	TargetID *string
	Event    Event
}

// TimerAction says what a TimerOp does.
type TimerAction string

const (
	// TimerSchedule upserts fire_at for (execution, path).
	TimerSchedule TimerAction = "schedule"
	// TimerCancel deletes the timer at (execution, path), if any.
	TimerCancel TimerAction = "cancel"
)

// TimerOp arms or cancels one durable timer of the committing execution.
type TimerOp struct {
	Action TimerAction
	Path   string
	FireAt float64 // epoch seconds; read for schedule only
}

// Spawn is an intent to create a child execution.
type Spawn struct {
	ChildID  string
	RootPath string
	Context  json.RawMessage // a JSON object; nil stands for {}
}

// OutboxEntry is one pending emit.
type OutboxEntry struct {
	Seq      int64
	TargetID *string
	Event    Event
}

// SpawnEntry is one pending spawn intent.
type SpawnEntry struct {
	Seq      int64
	ParentID string
	ChildID  string
	RootPath string
	Context  json.RawMessage
}

// DueTimer is a timer whose time has come.
type DueTimer struct {
	ExecutionID string
	Path        string
	FireAt      float64
}

// TraceEntry is one step of an execution's trace ring. Entry is the stored
// JSON object; Index is its position, which the seeds merge into the object
// as "index".
type TraceEntry struct {
	Index int64
	Entry json.RawMessage
}

// ExecutionSummary is the listing projection of an execution.
type ExecutionSummary struct {
	ID           string
	DefinitionID string
	Version      int64
	Status       string
	Outcome      *string
	ActivePath   string
	ParentID     *string
}

// ListFilter selects and pages list_executions.
type ListFilter struct {
	DefinitionID *string
	// Statuses keeps executions whose status is any of these.
	// Decision: an empty list means no status filter (the seeds test `if statuses:`).
	Statuses  []string
	RootsOnly bool
	// Cursor is the opaque Next of the previous page; "" starts at the beginning.
	Cursor string
	// Limit is the page size and must be at least 1.
	Limit int
}

// Page is one page of summaries. Next is the cursor for the following page,
// or "" when no rows remain.
type Page struct {
	Items []ExecutionSummary
	Next  string
}

// StoreConflict is the error a commit returns when its compare-and-swap lost:
// the row was not at Expected. Found is the stored version, nil when no row
// exists.
type StoreConflict struct {
	ID       string
	Expected int64
	Found    *int64
}

func (c *StoreConflict) Error() string {
	found := "none"
	if c.Found != nil {
		found = fmt.Sprint(*c.Found)
	}
	return fmt.Sprintf("store conflict on execution %q: expected version %d, found %s", c.ID, c.Expected, found)
}

// AsConflict returns the *StoreConflict in err's chain, if any.
func AsConflict(err error) (*StoreConflict, bool) {
	var c *StoreConflict
	ok := errors.As(err, &c)
	return c, ok
}

// ErrInvalidArgument marks a request the contract rejects before touching
// storage: a page limit below 1, a cursor the store did not issue.
var ErrInvalidArgument = errors.New("invalid argument")

// ErrNotApplied marks a failed write that provably changed nothing (the
// transaction never began, or was rolled back before commit). A history
// records such a write as failed. Any other failed write has an unknown
// outcome: it may or may not have been applied, and is recorded as
// indeterminate.
var ErrNotApplied = errors.New("write not applied")

// ErrBroken marks the errors of a store that broke for good: every later
// operation fails at once, so no later answer can tell anything about the
// store. An out-of-process adapter that broke its protocol (a crash, a
// malformed line, a wrong id, no answer in time: docs/ADAPTER.md §6) is
// one. A harness that sees it stops at once and reports the store's first
// error (Breakable) instead of retrying, healing or minimising against it.
var ErrBroken = errors.New("store broken")

// Breakable is implemented by a store that can break for good (ErrBroken).
// Broken returns the error that broke it, wrapping ErrBroken, or nil while
// it is usable.
type Breakable interface {
	Broken() error
}
