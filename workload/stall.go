package workload

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrStalled marks traffic that stopped because the store stopped
// answering: no store call of any client returned within its timeout for
// Config.StallBound, or no write did while writes waited (reads still
// answered: a primary that takes no write behind replicas that serve
// reads). Without this bound a store that hangs every call, or every
// write, would keep a run going for Ops × OpTimeout / Clients (hours at
// the defaults).
var ErrStalled = errors.New("the store answered no call")

// writeStall is a stall of the writes alone: errors.Is(err, ErrStalled),
// with its own text.
type writeStall struct{ msg string }

func (e writeStall) Error() string        { return e.msg }
func (e writeStall) Is(target error) bool { return target == ErrStalled }

// DefaultStallBound is Config.StallBound's default, raised to
// 6 × OpTimeout where that is longer: far past any fault window a scenario
// injects (seconds), so that only a store that stopped answering reaches it.
const DefaultStallBound = time.Minute

// stallWatch stops the traffic when no store call has returned in time for
// bound, or no write has while one waited. A call returned in time when its
// context had not expired (nor been cancelled) as the call ended; an answer
// that is an error counts, a timeout does not.
type stallWatch struct {
	bound, opTimeout time.Duration
	start            time.Time
	last             atomic.Int64 // time of the last answer, since start
	// writeWaiting is 1 + the time, since start, at which a write began
	// with no write answered since; 0 when none waits. A write answered in
	// time clears it, and the next write to begin sets it again. Writes in
	// flight are counted: a write stall needs one waiting still.
	writeWaiting atomic.Int64
	writing      atomic.Int64
}

func newStallWatch(cfg Config) *stallWatch {
	return &stallWatch{bound: cfg.StallBound, opTimeout: cfg.OpTimeout, start: time.Now()}
}

// begun records that a call began; write says it changes the store.
func (s *stallWatch) begun(write bool) {
	if write {
		s.writing.Add(1)
		s.writeWaiting.CompareAndSwap(0, 1+int64(time.Since(s.start)))
	}
}

// ended records that a call ended, answered in time or not.
func (s *stallWatch) ended(write, inTime bool) {
	if inTime {
		s.last.Store(int64(time.Since(s.start)))
		if write {
			s.writeWaiting.Store(0)
		}
	}
	if write {
		s.writing.Add(-1)
	}
}

// run checks for a stall until ctx ends; on one it stops the traffic with
// an error wrapping ErrStalled that says from when to when.
func (s *stallWatch) run(ctx context.Context, stop context.CancelCauseFunc) {
	tick := time.NewTicker(min(time.Second, s.bound/10))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		since, now := time.Duration(s.last.Load()), time.Since(s.start)
		if now-since > s.bound {
			stop(fmt.Errorf("%w within its %v timeout from %.1fs to %.1fs of the traffic (more than %v), and the traffic stopped there",
				ErrStalled, s.opTimeout, since.Seconds(), now.Seconds(), s.bound))
			return
		}
		if w := s.writeWaiting.Load(); w != 0 && now-time.Duration(w-1) > s.bound && s.writing.Load() > 0 {
			stop(writeStall{fmt.Sprintf("the store answered no write within its %v timeout from %.1fs to %.1fs of the traffic (more than %v; reads were answered), and the traffic stopped there",
				s.opTimeout, time.Duration(w-1).Seconds(), now.Seconds(), s.bound)})
			return
		}
	}
}
