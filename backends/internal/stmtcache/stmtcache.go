// Package stmtcache keeps each pooled connection's prepared statements, so
// that a statement the store runs again and again is parsed and planned by
// SQLite once per connection rather than once per call.
//
// database/sql prepares a statement for every ExecContext and QueryContext
// on a connection that does not keep statements itself, and the store's
// statements are fixed strings run thousands of times: preparing them was
// 17% of an embedded qualification's CPU (docs/PERFORMANCE.md). A cached
// statement is the driver's own (modernc.org/sqlite keeps the SQLite
// handle of a single-statement string and resets it between uses), so
// what runs is exactly what ran before; only the preparing is saved.
package stmtcache

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// MaxStatements bounds each connection's cache: the stores run a few dozen
// distinct statements; a string beyond the bound runs uncached.
const MaxStatements = 128

// OpenDB is sql.Open(driverName, dsn) with every connection's statements
// cached.
func OpenDB(driverName, dsn string) (*sql.DB, error) {
	probe, err := sql.Open(driverName, dsn) // connects to nothing
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	if err := probe.Close(); err != nil {
		return nil, err
	}
	return sql.OpenDB(connector{drv: drv, dsn: dsn}), nil
}

type connector struct {
	drv driver.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	inner, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &conn{inner: inner, stmts: map[string]*entry{}}, nil
}

func (c connector) Driver() driver.Driver { return c.drv }

// entry is one cached statement; busy while rows read from it are open.
type entry struct {
	st   driver.Stmt
	busy bool
}

// conn is one pooled connection with its statements. database/sql never
// calls a connection from two goroutines at once.
type conn struct {
	inner driver.Conn
	stmts map[string]*entry
}

var (
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
)

// statement returns the cached statement for query, preparing it on first
// use; fresh, when query's statement is busy or the cache is full, is a
// statement the caller must close itself.
func (c *conn) statement(ctx context.Context, query string) (e *entry, fresh bool, err error) {
	if e, ok := c.stmts[query]; ok && !e.busy {
		return e, false, nil
	}
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	if _, ok := c.stmts[query]; ok || len(c.stmts) >= MaxStatements {
		return &entry{st: st}, true, nil
	}
	e = &entry{st: st}
	c.stmts[query] = e
	return e, false, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, fresh, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	x, ok := e.st.(driver.StmtExecContext)
	if !ok {
		return nil, closeFresh(fresh, e, fmt.Errorf("stmtcache: %T cannot execute with a context", e.st))
	}
	r, err := x.ExecContext(ctx, args)
	if fresh {
		err = errors.Join(err, e.st.Close())
	}
	return r, err
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	e, fresh, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	q, ok := e.st.(driver.StmtQueryContext)
	if !ok {
		return nil, closeFresh(fresh, e, fmt.Errorf("stmtcache: %T cannot query with a context", e.st))
	}
	r, err := q.QueryContext(ctx, args)
	if err != nil {
		return nil, closeFresh(fresh, e, err)
	}
	e.busy = true
	return &rows{Rows: r, e: e, fresh: fresh}, nil
}

// closeFresh closes a statement that is not cached, and adds its error.
func closeFresh(fresh bool, e *entry, err error) error {
	if fresh {
		return errors.Join(err, e.st.Close())
	}
	return err
}

// rows frees its statement for the next use when closed.
type rows struct {
	driver.Rows
	e     *entry
	fresh bool
}

func (r *rows) Close() error {
	err := r.Rows.Close()
	r.e.busy = false
	if r.fresh {
		err = errors.Join(err, r.e.st.Close())
	}
	return err
}

func (c *conn) Prepare(query string) (driver.Stmt, error) { return c.inner.Prepare(query) }

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.inner.Prepare(query)
}

func (c *conn) Begin() (driver.Tx, error) { return c.BeginTx(context.Background(), driver.TxOptions{}) }

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	//lint:ignore SA1019 the driver has nothing newer than Begin
	return c.inner.Begin()
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Close finalizes the cached statements, then closes the connection.
func (c *conn) Close() error {
	var errs []error
	for q, e := range c.stmts {
		errs = append(errs, e.st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.inner.Close())...)
}
