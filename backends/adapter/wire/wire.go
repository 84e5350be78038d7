// Package wire is version 1 of the adapter protocol (docs/ADAPTER.md): the
// messages the harness and an adapter exchange as JSON lines, and the
// encodings of the contract's values in them. Both sides use it: package
// adapter (the harness) and package serve (an adapter written in Go).
package wire

import (
	"encoding/json"
	"fmt"
)

// Version is the protocol version this package speaks.
const Version = 1

// MaxLine bounds one message, newline included.
const MaxLine = 16 << 20

// Operation names.
const (
	OpHello          = "hello"
	OpCommit         = "commit"
	OpSave           = "save"
	OpLoad           = "load"
	OpLoadForEvent   = "load_for_event"
	OpListExecutions = "list_executions"
	OpIsProcessed    = "is_processed"
	OpPendingOutbox  = "pending_outbox"
	OpAckOutbox      = "ack_outbox"
	OpPendingSpawns  = "pending_spawns"
	OpAckSpawn       = "ack_spawn"
	OpDueTimers      = "due_timers"
	OpDeleteTimer    = "delete_timer"
	OpAppendTrace    = "append_trace"
	OpReadTrace      = "read_trace"
	OpDump           = "dump"
	OpReset          = "reset"
	OpSetTraceMax    = "set_trace_max"
	OpShutdown       = "shutdown"
)

// RequiredOps are the contract's operations; every adapter supports them.
var RequiredOps = []string{
	OpCommit, OpSave, OpLoad, OpLoadForEvent, OpListExecutions, OpIsProcessed,
	OpPendingOutbox, OpAckOutbox, OpPendingSpawns, OpAckSpawn, OpDueTimers,
	OpDeleteTimer, OpAppendTrace, OpReadTrace,
}

// OptionalOps are the operations an adapter may support.
var OptionalOps = []string{OpDump, OpReset, OpSetTraceMax}

// IsWrite reports whether op changes the store, so that a failure of
// unknown outcome matters.
func IsWrite(op string) bool {
	switch op {
	case OpCommit, OpSave, OpAckOutbox, OpAckSpawn, OpDeleteTimer, OpAppendTrace, OpReset:
		return true
	}
	return false
}

// Request is one line from the harness.
type Request struct {
	ID   uint64          `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args"`
}

// Response is one line from the adapter: Result when OK, Error otherwise.
type Response struct {
	ID     uint64          `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error kinds.
const (
	// KindConflict is a lost compare-and-swap; nothing was written.
	KindConflict = "conflict"
	// KindNotApplied is a definite failure: nothing happened.
	KindNotApplied = "not_applied"
	// KindInvalidArgument is a request rejected before touching storage.
	KindInvalidArgument = "invalid_argument"
	// KindUnknown is a failure of unknown outcome.
	KindUnknown = "unknown"
)

// Error is a failed operation. ExecutionID, Expected and Found are the
// details of a KindConflict and are written for it only (see MarshalJSON).
type Error struct {
	Kind        string
	Message     string
	ExecutionID string
	Expected    int64
	Found       *int64 // nil: no row
}

// Hello is the args of the first request to every process.
type Hello struct {
	Protocol int       `json:"protocol"`
	Store    StoreInfo `json:"store"`
	TraceMax int       `json:"trace_max"`
	Process  int       `json:"process"`
}

// StoreInfo says which store an adapter process serves: every process of
// one pool gets the same.
type StoreInfo struct {
	// Dir is an empty directory the harness created for the store.
	Dir string `json:"dir"`
	// Name is unique to the store, for adapters that need a name on a server.
	Name string `json:"name"`
}

// HelloResult is the adapter's answer to hello.
type HelloResult struct {
	Protocol int      `json:"protocol"`
	Name     string   `json:"name"`
	Ops      []string `json:"ops"`
	// MaxProcesses is 0 for no limit, 1 for a store that cannot be shared.
	MaxProcesses int `json:"max_processes"`
}

// Check reports what is wrong with a hello answer, if anything.
func (h HelloResult) Check() error {
	if h.Protocol != Version {
		return fmt.Errorf("the adapter speaks protocol %d, not %d", h.Protocol, Version)
	}
	if h.MaxProcesses < 0 {
		return fmt.Errorf("max_processes must not be negative, got %d", h.MaxProcesses)
	}
	var missing []string
	for _, op := range RequiredOps {
		if !h.Has(op) {
			missing = append(missing, op)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the adapter does not support the required operations %v", missing)
	}
	return nil
}

// Has reports whether the adapter listed op.
func (h HelloResult) Has(op string) bool {
	for _, o := range h.Ops {
		if o == op {
			return true
		}
	}
	return false
}
