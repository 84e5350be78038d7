package managed

import (
	"context"
	"encoding/json"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/model"
)

// SplitStore writes through one store and reads through another: an
// application whose writes reach the cluster while its reads are served by
// one particular node, at that node's read level. It is how the read-level
// hazard is shown: reads at level none from a follower cut off from the
// others return what it held when it was cut off.
type SplitStore struct {
	// Writer takes every write (and Dump, Reset and the trace cap); Reader
	// every read.
	Writer *Store
	Reader *rqlite.Store
}

var (
	_ model.Store          = (*SplitStore)(nil)
	_ model.Resetter       = (*SplitStore)(nil)
	_ model.TraceMaxSetter = (*SplitStore)(nil)
)

// ReadingFrom returns a store that writes through s and reads from node id
// at level. Closing it closes the reader only.
func (s *Store) ReadingFrom(id string, level rqlite.Level) (*SplitStore, error) {
	r, err := s.NodeView(id, level)
	if err != nil {
		return nil, err
	}
	return &SplitStore{Writer: s, Reader: r}, nil
}

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
	return s.Reader.Load(ctx, id)
}

// LoadForEvent implements model.Store.
func (s *SplitStore) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	return s.Reader.LoadForEvent(ctx, id, eventID)
}

// ListExecutions implements model.Store.
func (s *SplitStore) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return s.Reader.ListExecutions(ctx, f)
}

// IsProcessed implements model.Store.
func (s *SplitStore) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	return s.Reader.IsProcessed(ctx, id, eventID)
}

// PendingOutbox implements model.Store.
func (s *SplitStore) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return s.Reader.PendingOutbox(ctx)
}

// AckOutbox implements model.Store.
func (s *SplitStore) AckOutbox(ctx context.Context, seq int64) error {
	return s.Writer.AckOutbox(ctx, seq)
}

// PendingSpawns implements model.Store.
func (s *SplitStore) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return s.Reader.PendingSpawns(ctx)
}

// AckSpawn implements model.Store.
func (s *SplitStore) AckSpawn(ctx context.Context, seq int64) error {
	return s.Writer.AckSpawn(ctx, seq)
}

// DueTimers implements model.Store.
func (s *SplitStore) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	return s.Reader.DueTimers(ctx, now)
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
	return s.Reader.ReadTrace(ctx, id)
}

// Reset implements model.Resetter.
func (s *SplitStore) Reset(ctx context.Context) error { return s.Writer.Reset(ctx) }

// SetTraceMax implements model.TraceMaxSetter, for both sides.
func (s *SplitStore) SetTraceMax(n int) {
	s.Writer.SetTraceMax(n)
	s.Reader.SetTraceMax(n)
}

// Close closes the reader; the writer belongs to the caller.
func (s *SplitStore) Close() error { return s.Reader.Close() }
