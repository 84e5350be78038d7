// Package guarded builds the statement list of a commit for a database that
// has no interactive transaction: rqlite's one-request
// /db/execute?transaction (seed 001). The list cannot read a version, branch
// and then write; so the execution write is a guarded upsert that applies
// only at the expected version, and every side-write is conditioned inside
// its own SQL on that upsert having won. The caller runs the whole list as
// one atomic batch and reads the outcome from the rows affected by the
// first statement: none means the compare-and-swap lost.
//
// The package knows SQL and the contract's rows only, not a transport: a
// Statement is an SQL text and its positional parameters, which is rqlite's
// wire form [sql, p1, p2, …] (see Statement.Wire). The mutants package runs
// the same list in one SQLite transaction; an rqlite backend can post it.
package guarded

import (
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// Statement is one SQL text with its positional ? parameters.
type Statement struct {
	SQL  string
	Args []any
}

// Wire returns the statement in rqlite's JSON wire form: [sql, args…].
func (s Statement) Wire() []any { return append([]any{s.SQL}, s.Args...) }

// Guard is the condition every side-write of a commit is conditioned on.
type Guard int

const (
	// OnData conditions each side-write on the executions row holding
	// exactly the bytes this commit wrote: true iff our own upsert won.
	// This is the seed's guard, and the correct one.
	OnData Guard = iota
	// OnVersion conditions each side-write on the row being at the new
	// version. It is the guard the seed warns against: when another writer
	// reached that version first, a losing commit's side-writes still find
	// a row at "our" version and leak.
	OnVersion
	// Unguarded writes every side-write unconditionally, for a caller that
	// decided the compare-and-swap some other way.
	Unguarded
)

// String names the guard.
func (g Guard) String() string {
	switch g {
	case OnData:
		return "data = ours"
	case OnVersion:
		return "version = new"
	case Unguarded:
		return "unguarded"
	}
	return fmt.Sprintf("Guard(%d)", int(g))
}

// Commit is one commit in the form the tables store it: the execution at its
// next version, canonically encoded, and the batch's rows.
type Commit struct {
	ID, DefinitionID string
	// Old is the version the caller committed from; the row is written at
	// Old+1.
	Old int64
	// Data is the execution at Old+1 as model.EncodeNext encodes it.
	Data             string
	Emits            []model.OutboxRow // Seq unused: the outbox numbers them
	ProcessedEventID *string
	Timers           []model.TimerOp
	Spawns           []model.SpawnRow // Seq unused
	// Trace is the canonical trace step, or nil for none.
	Trace *string
	// TraceMax caps the ring after the trace step; 0 means unbounded.
	TraceMax int
}

// New returns the version this commit writes.
func (c Commit) New() int64 { return c.Old + 1 }

// Prepare encodes exe at its next version and the batch canonically, and
// rejects what model.Reference rejects (model.PrepareBatch), so that an
// invalid batch is refused before anything is sent.
func Prepare(exe *model.Execution, b model.Batch, traceMax int) (Commit, error) {
	data, err := model.EncodeNext(exe)
	if err != nil {
		return Commit{}, err
	}
	rows, err := model.PrepareBatch(exe.ID, b)
	if err != nil {
		return Commit{}, err
	}
	return Commit{ID: exe.ID, DefinitionID: exe.DefinitionID, Old: exe.Version, Data: data,
		Emits: rows.Emits, ProcessedEventID: b.ProcessedEventID, Timers: b.Timers,
		Spawns: rows.Spawns, Trace: rows.Trace, TraceMax: traceMax}, nil
}
