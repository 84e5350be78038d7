package lagsim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/storecheck/storecheck/model"
)

// tornReplica is the replica of mutant=torn-replica: it applies other
// clients' commits in two steps and serves reads in between. Its
// executions and dedupe ledger come from one snapshot of the primary, its
// outbox, spawns, timers and trace from another, older one. A scheduled
// refresh moves both one step on: the rows' snapshot becomes the side
// tables', and the other connection takes the primary's current one, so
// each read shows the rows and markers of the newest commits without their
// other side-writes. The refresh after one of the client's own writes is
// whole (both snapshots take the primary's current state), so the client
// always reads its own writes.
//
// Each table on its own shows a committed state, never older than before;
// load_for_event answers from one snapshot; the client's own writes are
// always visible. So the replica rules on loads, the queue checks and
// conformance all hold; only the reads of the other tables held against
// what the same replica's rows showed (the prefix rules) see the torn
// commits, and, after the heal, the convergence check, which compares
// every table the replica holds with the primary's.
type tornReplica struct {
	readOnly                 // every write goes to the primary
	mu          sync.RWMutex // reads share it, a refresh holds it alone
	rows, sides *snapshot    // each on a replica connection (snapshot.go)
	own         atomic.Bool  // a write of the client succeeded since the last refresh
}

var _ model.Store = (*tornReplica)(nil)

// openTorn opens the two snapshots of a torn replica, both at the
// primary's current state.
func openTorn(ctx context.Context, path string, cfg model.Config, name string) (*tornReplica, error) {
	a, err := openReplica(ctx, path, cfg, name+" rows")
	if err != nil {
		return nil, err
	}
	b, err := openReplica(ctx, path, cfg, name+" side tables")
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return &tornReplica{rows: a, sides: b}, nil
}

// wrote says that a write of the client succeeded on the primary.
func (t *tornReplica) wrote() { t.own.Store(true) }

// refresh moves the torn replica on (see tornReplica).
func (t *tornReplica) refresh(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.own.Swap(false) {
		return errors.Join(t.rows.refresh(ctx), t.sides.refresh(ctx))
	}
	// BUG: the side tables keep the snapshot the rows had: the commits
	// since are applied to the executions and the ledger only, until the
	// next refresh.
	next := t.sides
	if err := next.refresh(ctx); err != nil {
		return err
	}
	t.rows, t.sides = next, t.rows
	return nil
}

// read runs fn on the two snapshots as they are, with no refresh between.
func read[T any](t *tornReplica, fn func(rows, sides model.Store) (T, error)) (T, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return fn(t.rows, t.sides)
}

func (t *tornReplica) Load(ctx context.Context, id string) (*model.Execution, error) {
	return read(t, func(rows, _ model.Store) (*model.Execution, error) { return rows.Load(ctx, id) })
}

func (t *tornReplica) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	type answer struct {
		exe  *model.Execution
		done bool
	}
	a, err := read(t, func(rows, _ model.Store) (answer, error) {
		exe, done, err := rows.LoadForEvent(ctx, id, eventID)
		return answer{exe, done}, err
	})
	return a.exe, a.done, err
}

func (t *tornReplica) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return read(t, func(rows, _ model.Store) (model.Page, error) { return rows.ListExecutions(ctx, f) })
}

func (t *tornReplica) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	return read(t, func(rows, _ model.Store) (bool, error) { return rows.IsProcessed(ctx, id, eventID) })
}

func (t *tornReplica) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return read(t, func(_, sides model.Store) ([]model.OutboxEntry, error) { return sides.PendingOutbox(ctx) })
}

func (t *tornReplica) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return read(t, func(_, sides model.Store) ([]model.SpawnEntry, error) { return sides.PendingSpawns(ctx) })
}

func (t *tornReplica) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	return read(t, func(_, sides model.Store) ([]model.DueTimer, error) { return sides.DueTimers(ctx, now) })
}

func (t *tornReplica) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return read(t, func(_, sides model.Store) ([]model.TraceEntry, error) { return sides.ReadTrace(ctx, id) })
}

// position is the older of its two snapshots' positions: the last state
// the torn replica holds whole.
func (t *tornReplica) position() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return min(t.rows.position(), t.sides.position())
}

// dump reads the tables as its reads see them: executions and the dedupe
// ledger from the rows' snapshot, the rest from the side tables'.
func (t *tornReplica) dump(ctx context.Context) (*model.Dump, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	rows, err := t.rows.dump(ctx)
	if err != nil {
		return nil, err
	}
	sides, err := t.sides.dump(ctx)
	if err != nil {
		return nil, err
	}
	sides.Executions, sides.Processed = rows.Executions, rows.Processed
	return sides, nil
}

// Close closes both snapshots' connections.
func (t *tornReplica) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return errors.Join(t.rows.Close(), t.sides.Close())
}
