package linearizability

import (
	"fmt"
	"math"
)

// Kind names a recorded store operation.
type Kind string

// The recorded kinds. Register and trace kinds are checked by porcupine; the
// queue and timer kinds feed the global checks.
const (
	KindCommit        Kind = "commit"
	KindSave          Kind = "save"
	KindLoad          Kind = "load"
	KindLoadForEvent  Kind = "load_for_event"
	KindIsProcessed   Kind = "is_processed"
	KindReadTrace     Kind = "read_trace"
	KindAppendTrace   Kind = "append_trace"
	KindPendingOutbox Kind = "pending_outbox"
	KindAckOutbox     Kind = "ack_outbox"
	KindPendingSpawns Kind = "pending_spawns"
	KindAckSpawn      Kind = "ack_spawn"
	KindDueTimers     Kind = "due_timers"
	KindDeleteTimer   Kind = "delete_timer"
)

// Kinds returns every kind, in a fixed order.
func Kinds() []Kind {
	return []Kind{
		KindCommit, KindSave, KindLoad, KindLoadForEvent, KindIsProcessed, KindReadTrace,
		KindAppendTrace, KindPendingOutbox, KindAckOutbox, KindPendingSpawns, KindAckSpawn,
		KindDueTimers, KindDeleteTimer,
	}
}

// IsWrite reports whether the kind changes the store. A write that fails with
// an unclassified error has an unknown outcome; a read that fails has none.
func (k Kind) IsWrite() bool {
	switch k {
	case KindCommit, KindSave, KindAppendTrace, KindAckOutbox, KindAckSpawn, KindDeleteTimer:
		return true
	}
	return false
}

// IsCommit reports whether the kind is a compare-and-swap write.
func (k Kind) IsCommit() bool { return k == KindCommit || k == KindSave }

// perExecution reports whether the kind names one execution.
func (k Kind) perExecution() bool {
	switch k {
	case KindPendingOutbox, KindAckOutbox, KindPendingSpawns, KindAckSpawn, KindDueTimers:
		return false
	}
	return true
}

func (k Kind) valid() bool {
	switch k {
	case KindCommit, KindSave, KindLoad, KindLoadForEvent, KindIsProcessed, KindReadTrace,
		KindAppendTrace, KindPendingOutbox, KindAckOutbox, KindPendingSpawns, KindAckSpawn,
		KindDueTimers, KindDeleteTimer:
		return true
	}
	return false
}

// Outcome is how an operation ended.
type Outcome string

const (
	// OutcomeOK: the operation succeeded.
	OutcomeOK Outcome = "ok"
	// OutcomeConflict: a commit's CAS lost, definitely; nothing was written.
	OutcomeConflict Outcome = "conflict"
	// OutcomeIndeterminate: a write ended with an error that leaves its effect
	// unknown. It may or may not have taken effect, at any time after its
	// call; its return time is EndOfHistory.
	OutcomeIndeterminate Outcome = "indeterminate"
	// OutcomeFailed: the store said the write was not applied (model.ErrNotApplied,
	// model.ErrInvalidArgument), or a read failed. It had no effect and the
	// checker ignores it, except that its side-writes must not exist.
	OutcomeFailed Outcome = "failed"
)

// Outcomes returns every outcome, in a fixed order.
func Outcomes() []Outcome {
	return []Outcome{OutcomeOK, OutcomeConflict, OutcomeIndeterminate, OutcomeFailed}
}

// EndOfHistory is the return time of an indeterminate operation: later than
// every other return, so porcupine may linearize it anywhere after its call.
const EndOfHistory int64 = math.MaxInt64

// Operation is one recorded call and its result. Times are nanoseconds since
// the recorder's base time, from one monotonic clock.
type Operation struct {
	// Client is the porcupine client id; each client's operations are
	// sequential. It changes after an indeterminate operation.
	Client    int    `json:"client"`
	Kind      Kind   `json:"kind"`
	Execution string `json:"execution,omitempty"`
	Input     Input  `json:"input"`
	Output    Output `json:"output"`
	Call      int64  `json:"call_ns"`
	Return    int64  `json:"return_ns"`
	// Heal marks the final reads taken with no faults, which the global
	// checks read as the final tables.
	Heal bool `json:"heal,omitempty"`
	// Replica, when set, names the embedded replica the operation's client
	// reads from (Recorder.NewClient). Its reads were served by that
	// replica and may be stale: they are checked by the replica rules
	// (replica.go) instead of porcupine. Its writes went to the primary and
	// are checked as any other; they are the replica's own writes for
	// read-your-writes. Heal reads of a replica are checked for
	// convergence and are never read as the final tables.
	Replica string `json:"replica,omitempty"`
	// ReadYourWrites marks an operation of a replica client that promises
	// its reads include its replica's own acknowledged writes.
	ReadYourWrites bool `json:"ryw,omitempty"`
}

// replicaRead reports whether op is a read served by a replica.
func (op *Operation) replicaRead() bool { return op.Replica != "" && !op.Kind.IsWrite() }

// Input is what an operation was asked to do. Only the fields of its kind
// are set.
type Input struct {
	// Expected is the version a commit or save compares against.
	Expected int64 `json:"expected,omitempty"`
	// Data is the id of the execution a commit or save writes (DataID).
	Data string `json:"data,omitempty"`
	// Prev is the token the writer believes is stored at Expected; empty
	// when Expected is 0.
	Prev string `json:"prev,omitempty"`
	// EventID is a commit's processed event id, or the event id that
	// load_for_event and is_processed ask about.
	EventID string     `json:"event_id,omitempty"`
	Emits   []EmitRef  `json:"emits,omitempty"`
	Timers  []TimerRef `json:"timers,omitempty"`
	// Spawns are the child ids of a commit's spawn intents.
	Spawns []string `json:"spawns,omitempty"`
	// Trace is the id (ObjectID) of the trace entry a commit or
	// append_trace appends.
	Trace string `json:"trace,omitempty"`
	// Seq is the entry ack_outbox or ack_spawn removes.
	Seq int64 `json:"seq,omitempty"`
	// Path and FireAt are delete_timer's arguments.
	Path   string  `json:"path,omitempty"`
	FireAt float64 `json:"fire_at,omitempty"`
	// Now is due_timers' argument.
	Now float64 `json:"now,omitempty"`
}

// EmitRef is one emit of a commit: its event id and target.
type EmitRef struct {
	EventID string  `json:"event_id"`
	Target  *string `json:"target,omitempty"`
}

// TimerRef is one timer op of a commit.
type TimerRef struct {
	Action string  `json:"action"` // "schedule" or "cancel"
	Path   string  `json:"path"`
	FireAt float64 `json:"fire_at,omitempty"`
}

// Output is what an operation returned. Only the fields of its kind are set.
type Output struct {
	Outcome Outcome `json:"outcome"`
	// Found is a conflict's stored version; nil means no row.
	Found *int64 `json:"found,omitempty"`
	// Exists, Version and Data are what load and load_for_event saw.
	Exists  bool   `json:"exists,omitempty"`
	Version int64  `json:"version,omitempty"`
	Data    string `json:"data,omitempty"`
	// Processed is load_for_event's and is_processed's flag.
	Processed bool           `json:"processed,omitempty"`
	Trace     []TraceItem    `json:"trace,omitempty"`
	Outbox    []OutboxItem   `json:"outbox,omitempty"`
	Spawns    []SpawnItem    `json:"spawns,omitempty"`
	Timers    []DueTimerItem `json:"timers,omitempty"`
	// Error is the text of the error a failed or indeterminate operation
	// returned.
	Error string `json:"error,omitempty"`
	// Observed is when an indeterminate operation's error came back (its
	// Return is EndOfHistory).
	Observed int64 `json:"observed_ns,omitempty"`
}

// TraceItem is one entry read back from the trace ring.
type TraceItem struct {
	Index int64  `json:"index"`
	Entry string `json:"entry"` // ObjectID of the entry
}

// OutboxItem is one pending outbox entry.
type OutboxItem struct {
	Seq     int64   `json:"seq"`
	EventID string  `json:"event_id"`
	Target  *string `json:"target,omitempty"`
}

// SpawnItem is one pending spawn intent.
type SpawnItem struct {
	Seq    int64  `json:"seq"`
	Parent string `json:"parent"`
	Child  string `json:"child"`
}

// DueTimerItem is one timer due_timers returned.
type DueTimerItem struct {
	Execution string  `json:"execution"`
	Path      string  `json:"path"`
	FireAt    float64 `json:"fire_at"`
}

// returnTime is the return time porcupine sees: EndOfHistory for an
// indeterminate operation, whatever was stored.
func (op *Operation) returnTime() int64 {
	if op.Output.Outcome == OutcomeIndeterminate {
		return EndOfHistory
	}
	return op.Return
}

// validate checks one operation on its own: known kind and outcome, an
// outcome its kind can have, an execution when the kind needs one, and a
// return not before the call.
func (op *Operation) validate() error {
	if !op.Kind.valid() {
		return fmt.Errorf("unknown kind %q", op.Kind)
	}
	switch op.Output.Outcome {
	case OutcomeOK, OutcomeFailed:
	case OutcomeConflict:
		if !op.Kind.IsCommit() {
			return fmt.Errorf("%s cannot end in a conflict", op.Kind)
		}
	case OutcomeIndeterminate:
		if !op.Kind.IsWrite() {
			return fmt.Errorf("%s is a read and cannot be indeterminate", op.Kind)
		}
	default:
		return fmt.Errorf("unknown outcome %q", op.Output.Outcome)
	}
	if op.Kind.perExecution() && op.Execution == "" {
		return fmt.Errorf("%s needs an execution id", op.Kind)
	}
	if op.ReadYourWrites && op.Replica == "" {
		return fmt.Errorf("read-your-writes set on an operation of no replica")
	}
	if op.Client < 0 {
		return fmt.Errorf("negative client id %d", op.Client)
	}
	if op.Call < 0 || op.returnTime() < op.Call {
		return fmt.Errorf("return %d before call %d", op.Return, op.Call)
	}
	return nil
}
