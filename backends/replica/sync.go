package replica

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// backgroundSyncBound is the deadline of a background sync, which has no
// caller's: far above a healthy sync (milliseconds) and above the longest
// fault that holds one (a frozen primary, under a second). A store whose
// syncs cannot be cancelled must honour it (the libsql package's guard).
const backgroundSyncBound = 10 * time.Second

// syncer serialises one replica's syncs and runs its background loop.
type syncer struct {
	sync     func(ctx context.Context) error
	schedule Schedule

	mu      sync.Mutex // held for the whole of a sync
	stalled atomic.Bool
	syncs   atomic.Int64
	failed  atomic.Int64
	last    atomic.Int64 // UnixNano of the last successful sync's start

	stop chan struct{}
	done chan struct{}
}

// SyncStats counts a replica's syncs.
type SyncStats struct {
	// Syncs succeeded; Failed did not (the replica stayed as it was);
	// Skipped were due while the replica was stalled.
	Syncs, Failed, Skipped int64
	// Last is when the last successful sync started; its snapshot of the
	// primary is at least that new.
	Last time.Time
}

func newSyncer(fn func(context.Context) error, s Schedule) *syncer {
	return &syncer{sync: fn, schedule: s}
}

// run syncs now, serialised with every other sync of this replica.
func (s *syncer) run(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	if err := s.sync(ctx); err != nil {
		s.failed.Add(1)
		return err
	}
	s.syncs.Add(1)
	s.last.Store(start.UnixNano())
	return nil
}

// start launches the background loop; a schedule that syncs on read has
// none.
func (s *syncer) start(skipped *atomic.Int64) {
	if s.schedule.OnRead() {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	next := s.schedule.waits()
	go func() {
		defer close(s.done)
		timer := time.NewTimer(next())
		defer timer.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-timer.C:
			}
			if s.stalled.Load() {
				skipped.Add(1)
			} else {
				// A failure is counted; the replica stays stale until a
				// later sync succeeds, as an embedded replica does.
				ctx, cancel := context.WithTimeout(context.Background(), backgroundSyncBound)
				_ = s.run(ctx)
				cancel()
			}
			timer.Reset(next())
		}
	}()
}

// close stops the background loop and waits for it; a sync under way
// finishes first.
func (s *syncer) close() {
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop = nil
}

func timeFromUnixNano(ns int64) time.Time { return time.Unix(0, ns) }
