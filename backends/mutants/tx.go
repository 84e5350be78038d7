package mutants

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/model"
)

// stmt is one SQL text and its parameters.
type stmt = guarded.Statement

// inTx runs fn in one write transaction (BEGIN IMMEDIATE … COMMIT) on one
// connection of db, as sqlstore does. When fn fails the transaction is rolled
// back; its error comes back unchanged if it is a *model.StoreConflict and
// marked model.ErrNotApplied otherwise. A failed COMMIT is marked so only if
// the ROLLBACK after it succeeds.
func inTx(ctx context.Context, db *sql.DB, fn func(c *sql.Conn) error) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return notApplied(fmt.Errorf("get connection: %w", err))
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		_, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return notApplied(fmt.Errorf("begin: %w", err))
	}
	if err := fn(c); err != nil {
		if !rollback(ctx, c) {
			return err // the transaction may still be open: outcome unknown
		}
		if _, ok := model.AsConflict(err); ok {
			return err
		}
		return notApplied(err)
	}
	if _, err := c.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		err = fmt.Errorf("commit transaction: %w", err)
		if rollback(ctx, c) {
			return notApplied(err)
		}
		return err
	}
	return nil
}

// rollback ends the open transaction on c and reports whether it did; when
// it did not, the connection is discarded instead of pooled.
func rollback(ctx context.Context, c *sql.Conn) bool {
	if _, err := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
		return false
	}
	return true
}

// notApplied marks err as a write that provably changed nothing.
func notApplied(err error) error {
	if errors.Is(err, model.ErrNotApplied) {
		return err
	}
	return fmt.Errorf("%w: %w", model.ErrNotApplied, err)
}

// execAll runs statements in order on c.
func execAll(ctx context.Context, c *sql.Conn, list []stmt) error {
	for i, s := range list {
		if _, err := c.ExecContext(ctx, s.SQL, s.Args...); err != nil {
			return fmt.Errorf("statement %d (%.40s…): %w", i, s.SQL, err)
		}
	}
	return nil
}
