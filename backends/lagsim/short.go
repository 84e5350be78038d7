package lagsim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/storecheck/storecheck/model"
)

// shortReplica is the replica of mutant=short-sync: its sync reports
// success but stops short, at the primary's position as of the replica's
// previous sync, not its current one. It is the bug of a replica that
// bounds a sync by the primary's replication index it learned on the round
// trip before (a cached index): the frames committed since that round trip
// are fetched, left for the next sync, and the sync returns success.
// libSQL bounds a sync by an index since its sync could run forever behind
// a steady writer (tursodatabase/libsql#1315, fixed by #1316): where that
// bound comes from is where such a bug lives.
//
// It holds two snapshots: the one it serves, and the next, which the
// previous sync took. A sync serves the next and takes the primary's
// current state into the other connection, for the sync after. The sync
// after one of the client's own writes is whole (both snapshots take the
// primary's current state): the write's answer carried a fresh index, so
// the client reads its own writes, and its reads only ever move forward.
// Every read is one committed state, monotonic, with the client's own
// writes: it looks like a replica that lags by one more sync, until the
// heal, where a sync must bring every replica to the primary.
type shortReplica struct {
	readOnly                   // every write goes to the primary
	mu            sync.RWMutex // reads share it, a sync holds it alone
	served, ahead *snapshot    // each on a replica connection (snapshot.go)
	own           atomic.Bool  // a write of the client succeeded since the last sync
	lie           bool         // position-ahead: the position is the one its sync saw
}

var _ model.Store = (*shortReplica)(nil)

// openShort opens the two snapshots of a short-sync replica, both at the
// primary's current state.
func openShort(ctx context.Context, path string, cfg model.Config, name string) (*shortReplica, error) {
	a, err := openReplica(ctx, path, cfg, name+" served")
	if err != nil {
		return nil, err
	}
	b, err := openReplica(ctx, path, cfg, name+" ahead")
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return &shortReplica{served: a, ahead: b}, nil
}

// wrote says that a write of the client succeeded on the primary.
func (s *shortReplica) wrote() { s.own.Store(true) }

// refresh is the replica's sync (see shortReplica).
func (s *shortReplica) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own.Swap(false) {
		return errors.Join(s.served.refresh(ctx), s.ahead.refresh(ctx))
	}
	// BUG: the sync stops at the state the previous sync saw the primary
	// at; what the primary committed since is taken, but not served.
	s.served, s.ahead = s.ahead, s.served
	return s.ahead.refresh(ctx)
}

// position is the position of the snapshot served: what the replica's
// reads see.
func (s *shortReplica) position() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.lie {
		// BUG (position-ahead): the position the sync saw at the primary,
		// not the one of the state served.
		return s.ahead.position()
	}
	return s.served.position()
}

// dump reads the tables of the snapshot served.
func (s *shortReplica) dump(ctx context.Context) (*model.Dump, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.served.dump(ctx)
}

// serve runs fn on the snapshot served, with no sync between.
func serve[T any](s *shortReplica, fn func(model.Store) (T, error)) (T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(s.served)
}

func (s *shortReplica) Load(ctx context.Context, id string) (*model.Execution, error) {
	return serve(s, func(r model.Store) (*model.Execution, error) { return r.Load(ctx, id) })
}

func (s *shortReplica) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	type answer struct {
		exe  *model.Execution
		done bool
	}
	a, err := serve(s, func(r model.Store) (answer, error) {
		exe, done, err := r.LoadForEvent(ctx, id, eventID)
		return answer{exe, done}, err
	})
	return a.exe, a.done, err
}

func (s *shortReplica) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return serve(s, func(r model.Store) (model.Page, error) { return r.ListExecutions(ctx, f) })
}

func (s *shortReplica) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	return serve(s, func(r model.Store) (bool, error) { return r.IsProcessed(ctx, id, eventID) })
}

func (s *shortReplica) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return serve(s, func(r model.Store) ([]model.OutboxEntry, error) { return r.PendingOutbox(ctx) })
}

func (s *shortReplica) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return serve(s, func(r model.Store) ([]model.SpawnEntry, error) { return r.PendingSpawns(ctx) })
}

func (s *shortReplica) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	return serve(s, func(r model.Store) ([]model.DueTimer, error) { return r.DueTimers(ctx, now) })
}

func (s *shortReplica) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return serve(s, func(r model.Store) ([]model.TraceEntry, error) { return r.ReadTrace(ctx, id) })
}

// Close closes both snapshots' connections.
func (s *shortReplica) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.served.Close(), s.ahead.Close())
}
