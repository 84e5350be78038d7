//go:build cgo

package libsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// initConnector is go-libsql's connector with a set of statements run on
// every connection it makes, before database/sql pools it. PRAGMA
// busy_timeout and synchronous are per connection, and go-libsql offers no
// connection hook, so this is where they are set.
type initConnector struct {
	inner driver.Connector
	init  []string
}

// newInitConnector opens go-libsql's connector for dsn. database/sql cannot
// look a driver up by name without opening a database, so the driver value
// is taken from a throw-away in-memory one.
func newInitConnector(dsn string, init []string) (*initConnector, error) {
	probe, err := sql.Open("libsql", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("find the libsql driver: %w", err)
	}
	drv := probe.Driver()
	if err := probe.Close(); err != nil {
		return nil, fmt.Errorf("find the libsql driver: %w", err)
	}
	dc, ok := drv.(driver.DriverContext)
	if !ok {
		return nil, fmt.Errorf("the libsql driver (%T) has no connectors", drv)
	}
	inner, err := dc.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return &initConnector{inner: inner, init: init}, nil
}

// Connect implements driver.Connector.
func (c *initConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, stmt := range c.init {
		if err := run(ctx, conn, stmt); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return conn, nil
}

// run executes stmt as a query and drains its rows: go-libsql's Exec fails
// with "Execute returned rows" on a PRAGMA that reports its new value.
func run(ctx context.Context, conn driver.Conn, stmt string) error {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return fmt.Errorf("connection %T cannot run queries", conn)
	}
	rows, err := q.QueryContext(ctx, stmt, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// Driver implements driver.Connector.
func (c *initConnector) Driver() driver.Driver { return c.inner.Driver() }

// Close closes go-libsql's database handle; sql.DB.Close calls it.
func (c *initConnector) Close() error {
	if cl, ok := c.inner.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
