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

// casInTx runs c's compare-and-swap in one transaction and, when it wins,
// then; a lost compare-and-swap is the *model.StoreConflict naming the
// version found, and nothing is written.
func casInTx(ctx context.Context, db *sql.DB, c guarded.Commit, then func(conn *sql.Conn) error) error {
	return inTx(ctx, db, func(conn *sql.Conn) error {
		cas := guarded.CAS(c)
		res, err := conn.ExecContext(ctx, cas.SQL, cas.Args...)
		if err != nil {
			return fmt.Errorf("compare-and-swap: %w", err)
		}
		won, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("compare-and-swap: rows affected: %w", err)
		}
		if won == 0 {
			conflict, err := foundVersion(ctx, conn, c)
			if err != nil {
				return err
			}
			return conflict
		}
		return then(conn)
	})
}

// writeAtSeqs writes c's emits and spawns, in batch order, at the seqs
// seq hands out per queue table ("outbox", "spawns"), then the rest of the
// batch as the seed does.
func writeAtSeqs(ctx context.Context, conn *sql.Conn, c guarded.Commit, seq func(table string) (int64, error)) error {
	for i, e := range c.Emits {
		n, err := seq("outbox")
		if err != nil {
			return fmt.Errorf("emit %d: %w", i, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO outbox (seq, target_id, event) VALUES (?, ?, ?)", n, nullable(e.TargetID), e.Event); err != nil {
			return fmt.Errorf("insert outbox emit %d: %w", i, err)
		}
	}
	for i, sp := range c.Spawns {
		n, err := seq("spawns")
		if err != nil {
			return fmt.Errorf("spawn %d: %w", i, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO spawns (seq, parent_id, child_id, root_path, context) VALUES (?, ?, ?, ?, ?)",
			n, sp.ParentID, sp.ChildID, sp.RootPath, sp.Context); err != nil {
			return fmt.Errorf("insert spawn %d: %w", i, err)
		}
	}
	rest := c
	rest.Emits, rest.Spawns = nil, nil
	return execAll(ctx, conn, guarded.SideWrites(rest, guarded.Unguarded))
}
