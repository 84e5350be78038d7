package replicalag

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// Defaults and bounds of a sweep.
const (
	DefaultClients     = 8
	DefaultExecutions  = 4
	DefaultUpdates     = 2000 // all levels together
	DefaultMaxAttempts = 8
	// DefaultLevelTime bounds one level's traffic when no duration is given.
	DefaultLevelTime = 30 * time.Second
	// DefaultCheckTimeout bounds the checker per level.
	DefaultCheckTimeout = time.Minute
	// MaxUpdates bounds any level.
	MaxUpdates = 1_000_000
)

// Backoff between two attempts of one update: BackoffBase doubled per
// attempt, capped at BackoffCap, times a seeded factor in [0.5, 1.5).
const (
	BackoffBase = 2 * time.Millisecond
	BackoffCap  = 64 * time.Millisecond
)

// StandardLevels are the lags a sweep picks from, up to its top.
func StandardLevels() []time.Duration {
	return []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond, time.Second}
}

// Levels returns the sweep up to top: every standard level not above it,
// and top itself.
func Levels(top time.Duration) []time.Duration {
	var out []time.Duration
	for _, l := range StandardLevels() {
		if l <= top {
			out = append(out, l)
		}
	}
	if !slices.Contains(out, top) {
		out = append(out, top)
	}
	return out
}

// Label names a lag in metric names and folders: "lag_200ms", or in
// microseconds when it is not a whole number of milliseconds.
func Label(lag time.Duration) string {
	if lag%time.Millisecond == 0 {
		return fmt.Sprintf("lag_%dms", lag.Milliseconds())
	}
	return fmt.Sprintf("lag_%dus", lag.Microseconds())
}

// Config describes one sweep. Zero fields take their defaults.
type Config struct {
	// Clients is how many clients run at once, each with its own replica.
	Clients int
	// Executions is how many executions they share: the contention knob.
	Executions int
	// Updates is how many updates (engine steps, each of up to
	// MaxAttempts load-and-commit attempts) the sweep runs in all, split
	// evenly over the levels; the fault phase runs as many as one level.
	Updates int
	// LevelTime bounds each level's traffic in wall-clock time.
	LevelTime time.Duration
	// MaxAttempts bounds the attempts of one update.
	MaxAttempts int
	// Levels are the lags to run; none means Levels(Target.Top).
	Levels []time.Duration
	// Faults runs the fault phase after the sweep.
	Faults bool
	// Seed drives every random choice.
	Seed uint64
	// CheckTimeout bounds the checker per level.
	CheckTimeout time.Duration
	// OpTimeout bounds each store call; 0 means 10 s.
	OpTimeout time.Duration
	// OutDir, when set, receives sweep.json, sweep.md, every level's
	// history and violations, and the fault log.
	OutDir string
	// Store names the backend in histories; give it redacted.
	Store string
	// Progress, when set, counts finished updates.
	Progress *atomic.Int64
}

// Validate says what in c Run would refuse, whatever the target, before
// anything is started (storecheck refuses such flags as bad usage).
func (c Config) Validate() error {
	_, err := c.normalize(&Target{})
	return err
}

// normalize fills defaults and rejects impossible values.
func (c Config) normalize(t *Target) (Config, error) {
	if c.Clients == 0 {
		c.Clients = DefaultClients
	}
	if c.Executions == 0 {
		c.Executions = DefaultExecutions
	}
	if c.Updates == 0 {
		c.Updates = DefaultUpdates
	}
	if c.LevelTime == 0 {
		c.LevelTime = DefaultLevelTime
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if len(c.Levels) == 0 {
		c.Levels = Levels(t.Top)
	}
	if c.CheckTimeout == 0 {
		c.CheckTimeout = DefaultCheckTimeout
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = 10 * time.Second
	}
	switch {
	case c.Clients < 1 || c.Clients > 256:
		return c, fmt.Errorf("replicalag: clients must be 1..256, got %d", c.Clients)
	case c.Executions < 1 || c.Executions > 10_000:
		return c, fmt.Errorf("replicalag: executions must be 1..10000, got %d", c.Executions)
	case c.Updates < 1 || c.Updates > MaxUpdates:
		return c, fmt.Errorf("replicalag: updates must be 1..%d, got %d", MaxUpdates, c.Updates)
	case c.LevelTime < 0 || c.CheckTimeout < 0 || c.OpTimeout < 0:
		return c, fmt.Errorf("replicalag: durations must not be negative")
	case c.MaxAttempts < 1 || c.MaxAttempts > 100:
		return c, fmt.Errorf("replicalag: attempts per update must be 1..100, got %d", c.MaxAttempts)
	}
	seen := map[string]bool{}
	for _, l := range c.Levels {
		if l < 0 || seen[Label(l)] {
			return c, fmt.Errorf("replicalag: lag levels must be distinct and not negative: %v", c.Levels)
		}
		seen[Label(l)] = true
	}
	return c, nil
}

// perLevel is the updates each level runs.
func (c Config) perLevel() int { return max(c.Updates/len(c.Levels), c.Clients) }

// LinkLabel names a link level: "link_4mbit".
func LinkLabel(rate int64) string {
	if rate%1_000_000 == 0 {
		return fmt.Sprintf("link_%dmbit", rate/1_000_000)
	}
	return fmt.Sprintf("link_%dkbit", rate/1000)
}

// DefaultLinks are the link rates a sweep slows the link to, where the
// target can: about the uplink of a small office and of a poor mobile
// connection. A commit moves tens of kilobytes of pages to every replica.
func DefaultLinks() []int64 { return []int64{16_000_000, 4_000_000} }

// executionIDs names the executions of a level.
func (c Config) executionIDs() []string {
	ids := make([]string, c.Executions)
	for i := range ids {
		ids[i] = fmt.Sprintf("e%d", i)
	}
	return ids
}
