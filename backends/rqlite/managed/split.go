package managed

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/model"
)

// SplitStore writes through one store and reads through another: an
// application whose writes reach the cluster while its reads are served by
// one particular node, at that node's read level. It is how the read-level
// hazards are shown: reads at level none from a follower cut off from the
// others return what it held when it was cut off; reads at level weak from
// a leader paused past an election return what it held when it froze.
//
// The node reads go to can change while it runs (Route): a fault that
// pauses the leader routes the reads to it as it resumes.
type SplitStore struct {
	// Writer takes every write (and Dump, Reset and the trace cap).
	Writer *Store
	// views are a read client per node, by node id.
	views map[string]*rqlite.Store
	// reader is the view reads go to now.
	reader atomic.Pointer[rqlite.Store]
}

var (
	_ model.Store          = (*SplitStore)(nil)
	_ model.Resetter       = (*SplitStore)(nil)
	_ model.TraceMaxSetter = (*SplitStore)(nil)
)

// ReadingFrom returns a store that writes through s and reads from node id
// at level. Closing it closes its read clients only.
func (s *Store) ReadingFrom(id string, level rqlite.Level) (*SplitStore, error) {
	sp, err := s.RoutedReads(level)
	if err != nil {
		return nil, err
	}
	if err := sp.Route(id); err != nil {
		sp.Close()
		return nil, err
	}
	return sp, nil
}

// RoutedReads returns a store that writes through s and reads at level
// from one node, which Route picks; until then, from the first node.
func (s *Store) RoutedReads(level rqlite.Level) (*SplitStore, error) {
	sp := &SplitStore{Writer: s, views: map[string]*rqlite.Store{}}
	for _, n := range s.cl.Nodes() {
		v, err := s.NodeView(n.ID, level)
		if err != nil {
			sp.Close()
			return nil, err
		}
		sp.views[n.ID] = v
		if sp.reader.Load() == nil {
			sp.reader.Store(v)
		}
	}
	if sp.reader.Load() == nil {
		return nil, errors.New("the cluster has no node to read from")
	}
	return sp, nil
}

// Route sends every read from now on to node id.
func (s *SplitStore) Route(id string) error {
	v, ok := s.views[id]
	if !ok {
		return errors.New("no node " + id + " to read from")
	}
	s.reader.Store(v)
	return nil
}

// read is the view reads go to now.
func (s *SplitStore) read() *rqlite.Store { return s.reader.Load() }

// Commit implements model.Store.
func (s *SplitStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	return s.Writer.Commit(ctx, exe, b)
}

// Save implements model.Store.
func (s *SplitStore) Save(ctx context.Context, exe *model.Execution) error {
	return s.Writer.Save(ctx, exe)
}

// Load implements model.Store.
func (s *SplitStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	return s.read().Load(ctx, id)
}

// LoadForEvent implements model.Store.
func (s *SplitStore) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	return s.read().LoadForEvent(ctx, id, eventID)
}

// ListExecutions implements model.Store.
func (s *SplitStore) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return s.read().ListExecutions(ctx, f)
}

// IsProcessed implements model.Store.
func (s *SplitStore) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	return s.read().IsProcessed(ctx, id, eventID)
}

// PendingOutbox implements model.Store.
func (s *SplitStore) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return s.read().PendingOutbox(ctx)
}

// AckOutbox implements model.Store.
func (s *SplitStore) AckOutbox(ctx context.Context, seq int64) error {
	return s.Writer.AckOutbox(ctx, seq)
}

// PendingSpawns implements model.Store.
func (s *SplitStore) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return s.read().PendingSpawns(ctx)
}

// AckSpawn implements model.Store.
func (s *SplitStore) AckSpawn(ctx context.Context, seq int64) error {
	return s.Writer.AckSpawn(ctx, seq)
}

// DueTimers implements model.Store.
func (s *SplitStore) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	return s.read().DueTimers(ctx, now)
}

// DeleteTimer implements model.Store.
func (s *SplitStore) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	return s.Writer.DeleteTimer(ctx, id, path, fireAt)
}

// AppendTrace implements model.Store.
func (s *SplitStore) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	return s.Writer.AppendTrace(ctx, id, entry)
}

// ReadTrace implements model.Store.
func (s *SplitStore) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return s.read().ReadTrace(ctx, id)
}

// Reset implements model.Resetter.
func (s *SplitStore) Reset(ctx context.Context) error { return s.Writer.Reset(ctx) }

// SetTraceMax implements model.TraceMaxSetter, for both sides.
func (s *SplitStore) SetTraceMax(n int) {
	s.Writer.SetTraceMax(n)
	for _, v := range s.views {
		v.SetTraceMax(n)
	}
}

// Close closes the read clients; the writer belongs to the caller.
func (s *SplitStore) Close() error {
	var errs []error
	for _, v := range s.views {
		errs = append(errs, v.Close())
	}
	return errors.Join(errs...)
}
