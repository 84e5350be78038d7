package replica

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Schedule says when a replica syncs. It is plain data; the same Schedule
// always gives the same waits.
type Schedule struct {
	// Interval is the mean wait between two background syncs. 0 means no
	// background loop: the replica syncs before every read instead.
	Interval time.Duration
	// Jitter spreads each wait uniformly over Interval·[1−Jitter, 1+Jitter];
	// 0 ≤ Jitter < 1.
	Jitter float64
	// Seed and Stream seed the jitter. Give each replica of a run its own
	// Stream, so that replicas do not sync in lockstep.
	Seed, Stream uint64
}

// DefaultJitter is the jitter of a schedule that names none: waits between
// half and one and a half intervals.
const DefaultJitter = 0.5

// Check rejects a schedule that cannot run.
func (s Schedule) Check() error {
	if s.Interval < 0 {
		return fmt.Errorf("sync interval must not be negative, got %v", s.Interval)
	}
	if s.Jitter < 0 || s.Jitter >= 1 {
		return fmt.Errorf("sync jitter must be in [0, 1), got %v", s.Jitter)
	}
	return nil
}

// OnRead reports whether the replica syncs before every read instead of in
// the background.
func (s Schedule) OnRead() bool { return s.Interval == 0 }

// waits returns a generator of the successive waits.
func (s Schedule) waits() func() time.Duration {
	rng := rand.New(rand.NewPCG(s.Seed, s.Stream))
	return func() time.Duration {
		f := 1 + s.Jitter*(2*rng.Float64()-1)
		return time.Duration(f * float64(s.Interval))
	}
}

// Waits returns the first n waits of the schedule; nil when it syncs on
// read. Two runs with the same schedule wait alike, which a digest of these
// proves.
func (s Schedule) Waits(n int) []time.Duration {
	if s.OnRead() {
		return nil
	}
	next := s.waits()
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = next()
	}
	return out
}
