package rqlite

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends/internal/listening"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Name prefixes every error of the store.
const Name = "rqlite"

// Store is a model.Store over an rqlite cluster (or any Executor that
// behaves like one). Several goroutines may use it at once.
type Store struct {
	exec     Executor
	level    Level
	guard    Guard
	st       sqlstore.Statements
	traceMax atomic.Int64
}

var (
	_ model.Store          = (*Store)(nil)
	_ model.Dumper         = (*Store)(nil)
	_ model.Resetter       = (*Store)(nil)
	_ model.TraceMaxSetter = (*Store)(nil)
)

// Open connects to the cluster opt names and creates the six tables,
// retrying until the cluster has a leader that accepts the schema, for at
// most opt.ConnectTimeout.
func Open(ctx context.Context, opt Options, cfg model.Config) (*Store, error) {
	opt, err := opt.normalize()
	if err != nil {
		return nil, fmt.Errorf("%s: open: %w", Name, err)
	}
	exec, err := NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("%s: open: %w", Name, err)
	}
	s, err := New(ctx, exec, opt.Level, opt.ConnectTimeout, cfg)
	if err != nil {
		exec.Close()
		return nil, fmt.Errorf("%s: open %v: %w", Name, opt.Nodes, err)
	}
	s.SetGuard(opt.Guard)
	return s, nil
}

// New returns a store over exec that reads at level, after creating the six
// tables; it retries that for up to wait (the cluster may still be electing
// a leader). The store owns exec only once New succeeded.
func New(ctx context.Context, exec Executor, level Level, wait time.Duration, cfg model.Config) (*Store, error) {
	s := Attach(exec, level, cfg)
	schema := make([]Statement, len(s.st.Schema))
	for i, q := range s.st.Schema {
		schema[i] = Statement{SQL: q}
	}
	deadline := time.Now().Add(wait)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := s.execute(ctx, schema)
		if err == nil {
			return s, nil
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("create schema: no leader accepted it within %v (%d attempts): %w", wait, attempt, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("create schema: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// Attach returns a store over exec that reads at level, without touching
// the cluster: for views of one node (a follower cut off from the others,
// say) on tables another store created.
func Attach(exec Executor, level Level, cfg model.Config) *Store {
	if level == "" {
		level = LevelStrong
	}
	s := &Store{exec: exec, level: level, guard: GuardPreState, st: sqlstore.NewStatements(sqlstore.AsIs)}
	s.traceMax.Store(int64(cfg.TraceMax))
	return s
}

// SetGuard chooses how commits tie their side-writes to the CAS; the
// default is GuardPreState (GuardData is the seed's, with its gap).
func (s *Store) SetGuard(g Guard) { s.guard = g }

// Guard returns the commit guard in use.
func (s *Store) Guard() Guard { return s.guard }

// Level returns the read level.
func (s *Store) Level() Level { return s.level }

// Executor returns the transport, for tools that talk to rqlite directly.
func (s *Store) Executor() Executor { return s.exec }

// SetTraceMax implements model.TraceMaxSetter; later appends use n.
func (s *Store) SetTraceMax(n int) { s.traceMax.Store(int64(n)) }

// Close releases the connections.
func (s *Store) Close() error {
	if err := s.exec.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", Name, err)
	}
	return nil
}

// errorf formats an error prefixed with the store's name, on one line.
func errorf(format string, a ...any) error {
	return sqlstore.OneLine(fmt.Errorf(Name+": "+format, a...))
}

// execute runs stmts as one transaction and returns the results, or the
// first statement error (marked not applied: the transaction rolled back).
func (s *Store) execute(ctx context.Context, stmts []Statement) error {
	_, err := s.executeResults(ctx, stmts)
	return err
}

func (s *Store) executeResults(ctx context.Context, stmts []Statement) ([]Result, error) {
	res, err := s.exec.Execute(ctx, stmts)
	if err != nil {
		return nil, err
	}
	for i, r := range res {
		if r.Err != nil {
			return nil, notApplied(fmt.Errorf("statement %d of the transaction (%.60s): %w", i, stmts[min(i, len(stmts)-1)].SQL, r.Err))
		}
	}
	if len(res) != len(stmts) {
		// A transaction either answers for every statement or carries an
		// error; anything else is not rqlite as we know it.
		return nil, fmt.Errorf("rqlite answered %d results for %d statements", len(res), len(stmts))
	}
	return res, nil
}

// query runs one read at level and returns its rows.
func (s *Store) query(ctx context.Context, level Level, q string, args ...any) ([][]any, error) {
	res, err := s.exec.Query(ctx, level, []Statement{{SQL: q, Args: args}})
	if err != nil {
		return nil, err
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("rqlite answered %d results for one query", len(res))
	}
	if res[0].Err != nil {
		return nil, res[0].Err
	}
	return res[0].Rows, nil
}

// notApplied marks err as a write that provably changed nothing.
func notApplied(err error) error {
	if errors.Is(err, model.ErrNotApplied) {
		return err
	}
	return fmt.Errorf("%w: %w", model.ErrNotApplied, err)
}

// OpenURL opens rqlite:REST (see ParseURL). Where every node refuses
// connections for listening.RefusedWait (or the connect timeout, if shorter) it
// says nothing listens there, without waiting out the rest of it.
func OpenURL(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
	opt, err := ParseURL(rest)
	if err != nil {
		return nil, err
	}
	wait := listening.RefusedWait
	if opt.ConnectTimeout > 0 {
		wait = min(wait, opt.ConnectTimeout)
	}
	if err := listening.Await(ctx, opt.Nodes, wait, "rqlited"); err != nil {
		return nil, fmt.Errorf("%s: open: %w", Name, err)
	}
	s, err := Open(ctx, opt, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}
