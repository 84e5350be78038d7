package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/storecheck/storecheck/model"
)

// Options tune a Store. The zero value runs the seed's statements.
type Options struct {
	// Name prefixes every error, e.g. "sqlite" or "libsql"; "" means "sqlstore".
	Name string
	// Statements replaces the SQL the store runs; nil means SQLite().
	Statements *Statements
	// Hooks are optional seams for fault injection.
	Hooks Hooks
	// SkipSchema opens a store over tables that exist already: New runs no
	// statement at all. A read-only replica needs it, since creating the
	// schema there would be a write (an embedded replica would send it to
	// its primary).
	SkipSchema bool
}

// Hooks are called at fixed points of the protocol. A nil hook is skipped.
type Hooks struct {
	// BeforeCommit runs inside a commit's transaction after its last write
	// and before COMMIT. An error rolls the transaction back and is returned.
	BeforeCommit func(ctx context.Context, exe *model.Execution) error
}

// Store is a model.Store over a *sql.DB holding the seed's six tables.
type Store struct {
	db       *sql.DB
	st       Statements
	hooks    Hooks
	name     string
	traceMax atomic.Int64
}

var (
	_ model.Store          = (*Store)(nil)
	_ model.Dumper         = (*Store)(nil)
	_ model.Resetter       = (*Store)(nil)
	_ model.TraceMaxSetter = (*Store)(nil)
)

// New creates the six tables in db if they are missing (unless
// opt.SkipSchema) and returns a store over it. The store owns db: Close
// closes it. On error db is left open and the error is not prefixed with
// the store's name, so that the caller can say which database failed to
// open.
func New(ctx context.Context, db *sql.DB, cfg model.Config, opt Options) (*Store, error) {
	s := &Store{db: db, st: SQLite(), hooks: opt.Hooks, name: opt.Name}
	if opt.Statements != nil {
		s.st = *opt.Statements
	}
	if s.name == "" {
		s.name = "sqlstore"
	}
	s.traceMax.Store(int64(cfg.TraceMax))
	if opt.SkipSchema {
		return s, nil
	}
	err := s.inTx(ctx, s.st.BeginWrite, func(c *sql.Conn) error {
		for _, q := range s.st.Schema {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return s, nil
}

// DB returns the underlying database, for tests and tools that look at the
// tables directly.
func (s *Store) DB() *sql.DB { return s.db }

// SetTraceMax implements model.TraceMaxSetter; later appends use n.
func (s *Store) SetTraceMax(n int) { s.traceMax.Store(int64(n)) }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", s.name, err)
	}
	return nil
}

// errorf formats an error prefixed with the store's name, on one line.
func (s *Store) errorf(format string, a ...any) error {
	return OneLine(fmt.Errorf(s.name+": "+format, a...))
}

// OneLine folds a multi-line error (go-libsql's messages contain newlines)
// into one line, keeping the chain for errors.Is and errors.As.
func OneLine(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\n") {
		return err
	}
	return oneLine{err}
}

type oneLine struct{ err error }

func (e oneLine) Error() string { return strings.ReplaceAll(e.err.Error(), "\n", "; ") }
func (e oneLine) Unwrap() error { return e.err }

// inTx runs fn in one transaction, opened by begin, on one pooled connection,
// and commits it. When fn fails the transaction is rolled back and fn's error
// returned; a *model.StoreConflict comes back unchanged, any other error
// wrapped with model.ErrNotApplied, since COMMIT was never sent. A failed
// COMMIT is marked so only if the ROLLBACK after it succeeds (the
// transaction was still open); otherwise its outcome is unknown.
//
// COMMIT and ROLLBACK run even when ctx is already cancelled: a commit that
// reached COMMIT should not become an unknown outcome because of a late
// cancellation, and a transaction must never go back to the pool open.
func (s *Store) inTx(ctx context.Context, begin string, fn func(c *sql.Conn) error) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return notApplied(fmt.Errorf("get connection: %w", err))
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, begin); err != nil {
		// BEGIN may have taken effect before a cancellation interrupted it;
		// make sure no transaction goes back to the pool. Without one, this
		// ROLLBACK fails harmlessly.
		_, _ = c.ExecContext(context.WithoutCancel(ctx), s.st.RollbackTx)
		return notApplied(fmt.Errorf("begin: %w", err))
	}
	if err := fn(c); err != nil {
		s.rollback(ctx, c)
		if _, ok := model.AsConflict(err); ok {
			return err
		}
		return notApplied(err)
	}
	if _, err := c.ExecContext(context.WithoutCancel(ctx), s.st.CommitTx); err != nil {
		err = fmt.Errorf("commit transaction: %w", err)
		if s.rollback(ctx, c) {
			return notApplied(err)
		}
		return err
	}
	return nil
}

// rollback ends the open transaction on c and reports whether it did. If
// it fails the connection may still hold the transaction, so it is
// discarded instead of pooled (closing it rolls back).
func (s *Store) rollback(ctx context.Context, c *sql.Conn) bool {
	if _, err := c.ExecContext(context.WithoutCancel(ctx), s.st.RollbackTx); err != nil {
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
