package procfault

import (
	"encoding/json"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/model/runstore"
)

// The worker tells its parent what it does as JSON lines on a pipe (file
// descriptor 3 in the worker). Each line is written with one write(2) after
// the fact it reports, so the parent learns of an acknowledgement only once
// the worker's Commit has returned, and a line the worker was killed while
// writing is never complete: the parent ignores a last line without its
// newline. Lines written before the worker died stay in the pipe and are
// read after its death.

// Message types, worker to parent.
const (
	// msgRecovered: the store opened after the previous crash; carries the
	// integrity check and a dump of the six tables.
	msgRecovered = "recovered"
	// msgReady: traffic may start (crash mode: it starts now; stall mode:
	// the worker waits for the parent's "go").
	msgReady = "ready"
	// msgBegin: a commit is about to be called; carries the whole commit.
	msgBegin = "begin"
	// msgPreCommit: sqlstore's BeforeCommit hook fired for commit N: every
	// statement of its transaction ran, COMMIT is next.
	msgPreCommit = "precommit"
	// msgAck: commit N returned without error.
	msgAck = "ack"
	// msgFail: commit N returned an error; the worker stops committing.
	msgFail = "fail"
	// msgIdle: the worker reached its commit budget and waits to be killed.
	msgIdle = "idle"
	// msgLocked: stall mode; the worker's commit holds the write lock and
	// waits for "release" on its standard input.
	msgLocked = "locked"
	// msgHistory: stall mode; the worker's recorded operations, at the end.
	msgHistory = "history"
	// msgError: the worker cannot go on; Stage says where it stopped.
	msgError = "error"
)

// Parent-to-worker lines, on the worker's standard input (stall mode).
const (
	lineGo      = "go"
	lineRelease = "release"
)

// message is one line of the protocol; only the fields of its Type are set.
type message struct {
	Type string `json:"type"`
	// N numbers the worker's commits from 1 (begin, precommit, ack, fail,
	// locked).
	N int `json:"n,omitempty"`

	// recovered
	Integrity  string      `json:"integrity,omitempty"`
	Dump       *model.Dump `json:"dump,omitempty"`
	RecoveryUS int64       `json:"recovery_us,omitempty"`
	Hooks      bool        `json:"hooks,omitempty"`

	// begin
	Commit *wireCommit `json:"commit,omitempty"`

	// Run-store mode: the recovered tables (recovered) and the op about to
	// be called (begin).
	RunsDump *runstore.Dump `json:"runs_dump,omitempty"`
	RunsOp   *runsOp        `json:"runs_op,omitempty"`

	// ack: LatencyUS from the call to its return; CommitUS from the
	// BeforeCommit hook to the return (0 without the hook).
	LatencyUS int64 `json:"latency_us,omitempty"`
	CommitUS  int64 `json:"commit_us,omitempty"`

	// fail, error
	Error      string `json:"error,omitempty"`
	NotApplied bool   `json:"not_applied,omitempty"`
	Stage      string `json:"stage,omitempty"`

	// history: the workload's steps and the count of the operations the
	// worker recorded, which follow the line as its body, in the history
	// file's lines (worker.Child.SendBody); Ops, read from the body by the
	// parent (startWorker).
	Steps int                         `json:"steps,omitempty"`
	Count int                         `json:"count,omitempty"`
	Ops   []linearizability.Operation `json:"-"`
}

// wireCommit is a commit as the begin message carries it. Raw JSON fields
// are omitted when empty, so that a nil trace or spawn context stays nil
// (json.RawMessage would read "null" back as four bytes).
type wireCommit struct {
	Exe       *model.Execution `json:"exe"`
	Emits     []model.Emit     `json:"emits,omitempty"`
	Processed *string          `json:"processed,omitempty"`
	Timers    []model.TimerOp  `json:"timers,omitempty"`
	Spawns    []wireSpawn      `json:"spawns,omitempty"`
	Trace     json.RawMessage  `json:"trace,omitempty"`
}

type wireSpawn struct {
	ChildID  string          `json:"child_id"`
	RootPath string          `json:"root_path"`
	Context  json.RawMessage `json:"context,omitempty"`
}

// toWire describes a commit of exe with batch b.
func toWire(exe *model.Execution, b model.Batch) *wireCommit {
	w := &wireCommit{Exe: exe.Clone(), Emits: b.Emits, Processed: b.ProcessedEventID, Timers: b.Timers, Trace: b.Trace}
	for _, s := range b.Spawns {
		w.Spawns = append(w.Spawns, wireSpawn{ChildID: s.ChildID, RootPath: s.RootPath, Context: s.Context})
	}
	return w
}

// batch returns the commit's batch.
func (w *wireCommit) batch() model.Batch {
	b := model.Batch{Emits: w.Emits, ProcessedEventID: w.Processed, Timers: w.Timers, Trace: w.Trace}
	for _, s := range w.Spawns {
		b.Spawns = append(b.Spawns, model.Spawn{ChildID: s.ChildID, RootPath: s.RootPath, Context: s.Context})
	}
	return b
}

// token returns the commit's witness token.
func (w *wireCommit) token() string { return witnessToken(w.Exe) }

// witnessToken reads the token field of an execution; "" when it has none.
func witnessToken(exe *model.Execution) string {
	var tok string
	if raw, ok := exe.Extra[linearizability.TokenField]; ok {
		_ = json.Unmarshal(raw, &tok)
	}
	return tok
}
