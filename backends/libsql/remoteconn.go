//go:build cgo

package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync/atomic"
	"time"
)

// A remote (Hrana over HTTP) connection is a stream on the server, which
// sqld drops when it idles for 10 s (STREAM_EXPIRED) or restarts (an
// invalid baton); from then on every statement on that connection fails,
// and database/sql would keep handing the dead connection out. remoteConn
// retires such a connection: it is not reused once it idled past
// remoteMaxIdle or a statement failed with one of those errors.
const remoteMaxIdle = 8 * time.Second

// streamGone are the errors after which the connection's stream is gone.
func streamGone() []string {
	return []string{"STREAM_EXPIRED", "invalid baton", "Stream handle", "stream has expired"}
}

// remoteConnector wraps each connection of inner in a remoteConn.
type remoteConnector struct{ driver.Connector }

func (c remoteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc := &remoteConn{inner: conn}
	rc.touch(nil)
	return rc, nil
}

// Close closes go-libsql's handle, as initConnector does.
func (c remoteConnector) Close() error {
	if cl, ok := c.Connector.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

type remoteConn struct {
	inner  driver.Conn
	last   atomic.Int64 // UnixNano of the last use
	broken atomic.Bool
}

var (
	_ driver.ConnPrepareContext = (*remoteConn)(nil)
	_ driver.ConnBeginTx        = (*remoteConn)(nil)
	_ driver.ExecerContext      = (*remoteConn)(nil)
	_ driver.QueryerContext     = (*remoteConn)(nil)
	_ driver.Validator          = (*remoteConn)(nil)
	_ driver.SessionResetter    = (*remoteConn)(nil)
)

// touch records a use and whether its error killed the stream.
func (c *remoteConn) touch(err error) {
	c.last.Store(time.Now().UnixNano())
	if err == nil {
		return
	}
	for _, s := range streamGone() {
		if strings.Contains(err.Error(), s) {
			c.broken.Store(true)
		}
	}
}

// IsValid is asked before the pool keeps the connection.
func (c *remoteConn) IsValid() bool {
	return !c.broken.Load() && time.Since(time.Unix(0, c.last.Load())) < remoteMaxIdle
}

// ResetSession is asked before the pool hands the connection out again.
func (c *remoteConn) ResetSession(context.Context) error {
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

func (c *remoteConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *remoteConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	p, ok := c.inner.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("libsql: the remote connection cannot prepare statements")
	}
	st, err := p.PrepareContext(ctx, query)
	c.touch(err)
	return st, err
}

func (c *remoteConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *remoteConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.inner.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("libsql: the remote connection cannot begin transactions")
	}
	tx, err := b.BeginTx(ctx, opts)
	c.touch(err)
	return tx, err
}

func (c *remoteConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := e.ExecContext(ctx, query, args)
	c.touch(err)
	return r, err
}

func (c *remoteConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := q.QueryContext(ctx, query, args)
	c.touch(err)
	return r, err
}

func (c *remoteConn) Close() error { return c.inner.Close() }
