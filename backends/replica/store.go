package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/storecheck/storecheck/model"
)

// Config is everything a Store is built from.
type Config struct {
	// Name prefixes every error the Store makes, e.g. "lagsim".
	Name string
	// Replica names this replica in histories and fault logs, e.g. "r0".
	Replica string
	// Primary takes every write, so the compare-and-swap is decided there.
	// Several Stores may share it; Close does not close it. It may be the
	// Reader itself, when the replica's driver sends writes to the primary
	// (libSQL's embedded replicas delegate every statement of a
	// transaction).
	Primary model.Store
	// Authority, when set, is the primary as a store of its own, which
	// Dump and Reset use; nil means Primary.
	Authority model.Store
	// Reader is the store opened on the replica; every read goes to it.
	// Close closes it.
	Reader model.Store
	// Sync copies the primary's latest state into the replica. It must
	// leave the replica as it was when it fails.
	Sync func(ctx context.Context) error
	// Schedule says when the replica syncs.
	Schedule Schedule
	// ReadYourWrites promises that a write that succeeded is visible to
	// this replica's next read: the Store syncs after it, unless
	// WriterSyncs says the writer did so already.
	ReadYourWrites bool
	WriterSyncs    bool
	// SyncAfterConflict, with ReadYourWrites, syncs after a commit the
	// primary refused with a conflict too, as libSQL's embedded replica
	// does after every statement it sent to the primary (a simulation sets
	// it to behave alike).
	SyncAfterConflict bool
	// Closers run at Close after the reader is closed, in order.
	Closers []func() error
}

// Store is a model.Store over a replica and its primary (see the package
// documentation).
type Store struct {
	cfg     Config
	sync    *syncer
	skipped atomic.Int64
}

var (
	_ model.Store          = (*Store)(nil)
	_ model.Dumper         = (*Store)(nil)
	_ model.Resetter       = (*Store)(nil)
	_ model.TraceMaxSetter = (*Store)(nil)
)

// New starts a Store: it syncs the replica once, then starts the background
// loop. On error nothing is left running and nothing is closed.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Primary == nil || cfg.Reader == nil || cfg.Sync == nil {
		return nil, fmt.Errorf("%s: replica %s: a primary, a reader and a sync function are required", cfg.Name, cfg.Replica)
	}
	if err := cfg.Schedule.Check(); err != nil {
		return nil, fmt.Errorf("%s: replica %s: %w", cfg.Name, cfg.Replica, err)
	}
	s := &Store{cfg: cfg, sync: newSyncer(cfg.Sync, cfg.Schedule)}
	if err := s.sync.run(ctx); err != nil {
		return nil, fmt.Errorf("%s: replica %s: first sync: %w", cfg.Name, cfg.Replica, err)
	}
	s.sync.start(&s.skipped)
	return s, nil
}

// Name returns the replica's name.
func (s *Store) Name() string { return s.cfg.Replica }

// ReadYourWrites reports whether a write is followed by a sync.
func (s *Store) ReadYourWrites() bool { return s.cfg.ReadYourWrites }

// Schedule returns the replica's sync schedule.
func (s *Store) Schedule() Schedule { return s.cfg.Schedule }

// Sync brings the replica up to the primary now, whether stalled or not
// (the heal after a run).
func (s *Store) Sync(ctx context.Context) error {
	if err := s.sync.run(ctx); err != nil {
		return fmt.Errorf("%s: replica %s: sync: %w", s.cfg.Name, s.cfg.Replica, err)
	}
	return nil
}

// StallSyncs stops the replica's background syncs (and its syncs before
// reads) until ResumeSyncs; syncs after a write, for read-your-writes, go
// on. It is the "stalled replica" fault.
func (s *Store) StallSyncs() { s.sync.stalled.Store(true) }

// ResumeSyncs ends StallSyncs; the next scheduled sync catches up.
func (s *Store) ResumeSyncs() { s.sync.stalled.Store(false) }

// SyncsStalled reports whether StallSyncs holds the replica back.
func (s *Store) SyncsStalled() bool { return s.sync.stalled.Load() }

// Stats returns the replica's sync counts.
func (s *Store) Stats() SyncStats {
	st := SyncStats{Syncs: s.sync.syncs.Load(), Failed: s.sync.failed.Load(), Skipped: s.skipped.Load()}
	if ns := s.sync.last.Load(); ns != 0 {
		st.Last = timeFromUnixNano(ns)
	}
	return st
}

// Close stops the syncs, closes the reader and runs the closers. The
// primary stays open.
func (s *Store) Close() error {
	s.sync.close()
	errs := []error{s.cfg.Reader.Close()}
	for _, c := range s.cfg.Closers {
		errs = append(errs, c())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: replica %s: close: %w", s.cfg.Name, s.cfg.Replica, err)
	}
	return nil
}

// beforeRead syncs first when the schedule says so. A failed sync is
// counted and the read goes on against the replica as it is.
func (s *Store) beforeRead(ctx context.Context) {
	if s.cfg.Schedule.OnRead() && !s.sync.stalled.Load() {
		_ = s.sync.run(ctx)
	}
}

// afterWrite makes a successful write visible to the writer's next read,
// with read-your-writes on. If that sync fails the write stands, but the
// error is returned without model.ErrNotApplied: the caller cannot be told
// both "done" and "you will read it".
func (s *Store) afterWrite(ctx context.Context, what string) error {
	if !s.cfg.ReadYourWrites || s.cfg.WriterSyncs {
		return nil
	}
	if err := s.sync.run(ctx); err != nil {
		return fmt.Errorf("%s: %s succeeded on the primary, but replica %s could not catch up (read-your-writes): %w",
			s.cfg.Name, what, s.cfg.Replica, err)
	}
	return nil
}

// Commit implements model.Store on the primary, where the CAS is decided.
func (s *Store) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	old := exe.Version
	if err := s.cfg.Primary.Commit(ctx, exe, b); err != nil {
		if _, lost := model.AsConflict(err); lost && s.cfg.SyncAfterConflict && s.cfg.ReadYourWrites && !s.cfg.WriterSyncs {
			_ = s.sync.run(ctx) // a failed sync leaves the replica as it was
		}
		return err
	}
	if err := s.afterWrite(ctx, fmt.Sprintf("commit %q", exe.ID)); err != nil {
		exe.Version = old // the contract: on any error exe.Version stays old
		return err
	}
	return nil
}

// Save implements model.Store: a commit with an empty batch.
func (s *Store) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Load implements model.Store from the replica.
func (s *Store) Load(ctx context.Context, id string) (*model.Execution, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.Load(ctx, id)
}

// LoadForEvent implements model.Store from the replica.
func (s *Store) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.LoadForEvent(ctx, id, eventID)
}

// ListExecutions implements model.Store from the replica.
func (s *Store) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.ListExecutions(ctx, f)
}

// IsProcessed implements model.Store from the replica.
func (s *Store) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.IsProcessed(ctx, id, eventID)
}

// PendingOutbox implements model.Store from the replica.
func (s *Store) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.PendingOutbox(ctx)
}

// AckOutbox implements model.Store on the primary.
func (s *Store) AckOutbox(ctx context.Context, seq int64) error {
	if err := s.cfg.Primary.AckOutbox(ctx, seq); err != nil {
		return err
	}
	return s.afterWrite(ctx, fmt.Sprintf("ack_outbox %d", seq))
}

// PendingSpawns implements model.Store from the replica.
func (s *Store) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.PendingSpawns(ctx)
}

// AckSpawn implements model.Store on the primary.
func (s *Store) AckSpawn(ctx context.Context, seq int64) error {
	if err := s.cfg.Primary.AckSpawn(ctx, seq); err != nil {
		return err
	}
	return s.afterWrite(ctx, fmt.Sprintf("ack_spawn %d", seq))
}

// DueTimers implements model.Store from the replica.
func (s *Store) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.DueTimers(ctx, now)
}

// DeleteTimer implements model.Store on the primary.
func (s *Store) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	if err := s.cfg.Primary.DeleteTimer(ctx, id, path, fireAt); err != nil {
		return err
	}
	return s.afterWrite(ctx, fmt.Sprintf("delete_timer %q %q", id, path))
}

// AppendTrace implements model.Store on the primary.
func (s *Store) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	if err := s.cfg.Primary.AppendTrace(ctx, id, entry); err != nil {
		return err
	}
	return s.afterWrite(ctx, fmt.Sprintf("append_trace %q", id))
}

// ReadTrace implements model.Store from the replica.
func (s *Store) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	s.beforeRead(ctx)
	return s.cfg.Reader.ReadTrace(ctx, id)
}

// Dump implements model.Dumper from the primary: the authoritative tables.
func (s *Store) Dump(ctx context.Context) (*model.Dump, error) {
	d, ok := s.authority().(model.Dumper)
	if !ok {
		return nil, fmt.Errorf("%s: dump: the primary (%T) cannot dump its tables", s.cfg.Name, s.authority())
	}
	return d.Dump(ctx)
}

// ResetObserver is a Reader that keeps a state of its own beside the
// replica's (a deliberately broken reader holding an older snapshot, say)
// and is told when the store was reset, after the replica synced to the
// emptied primary: a reset is none of the clauses such a reader breaks.
type ResetObserver interface {
	AfterReset(ctx context.Context) error
}

// Reset implements model.Resetter: the primary is emptied and the replica
// synced to it (and a Reader that is a ResetObserver told).
func (s *Store) Reset(ctx context.Context) error {
	r, ok := s.authority().(model.Resetter)
	if !ok {
		return fmt.Errorf("%s: reset: the primary (%T) cannot be emptied", s.cfg.Name, s.authority())
	}
	if err := r.Reset(ctx); err != nil {
		return err
	}
	if err := s.Sync(ctx); err != nil {
		return err
	}
	if o, ok := s.cfg.Reader.(ResetObserver); ok {
		if err := o.AfterReset(ctx); err != nil {
			return fmt.Errorf("%s: reset: replica %s: %w", s.cfg.Name, s.cfg.Replica, err)
		}
	}
	return nil
}

// SetTraceMax implements model.TraceMaxSetter on the writer, which trims
// the ring.
func (s *Store) SetTraceMax(n int) {
	if t, ok := s.cfg.Primary.(model.TraceMaxSetter); ok {
		t.SetTraceMax(n)
	}
}

// authority is the primary's own store, for Dump and Reset.
func (s *Store) authority() model.Store {
	if s.cfg.Authority != nil {
		return s.cfg.Authority
	}
	return s.cfg.Primary
}
