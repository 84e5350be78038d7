package rqlite

import (
	"context"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
)

// Statement is one SQL text and its positional parameters: rqlite's wire
// form [sql, p1, p2, …].
type Statement = guarded.Statement

// Result is what rqlite answers for one statement. Values are as JSON
// decoded them: string, float64, bool or nil.
type Result struct {
	// Err is the statement's own error: rqlite answers 200 with an "error"
	// inside the result.
	Err error
	// RowsAffected is a write's row count; 0 when rqlite sent none.
	RowsAffected int64
	Columns      []string
	Rows         [][]any
}

// Executor sends statements to rqlite. The store holds all the protocol;
// an Executor is only the transport, so that the protocol can be tested
// against a local SQLite that behaves like rqlite.
//
// Errors: a request error wraps model.ErrNotApplied when the request
// provably did nothing; a statement error is in its Result (and, for
// Execute, the whole transaction was rolled back).
type Executor interface {
	// Execute runs stmts as one atomic transaction, in one request.
	Execute(ctx context.Context, stmts []Statement) ([]Result, error)
	// Query runs read statements at level, in one request.
	Query(ctx context.Context, level Level, stmts []Statement) ([]Result, error)
	// Close releases the executor's connections.
	Close() error
}
