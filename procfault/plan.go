package procfault

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// killKind says where a cycle's SIGKILL is aimed.
type killKind string

const (
	// killHeld: commit K's BeforeCommit hook waits to be killed, so the kill
	// lands after every statement of its transaction and before COMMIT.
	killHeld killKind = "held"
	// killRaced: a random delay, up to twice the time COMMIT takes, after
	// commit K's BeforeCommit hook fired: the kill lands during COMMIT or
	// just after it, before or after the acknowledgement.
	killRaced killKind = "raced"
	// killAnywhere: a random delay, up to twice the time a commit takes,
	// after commit K was announced: the kill lands anywhere in its call
	// (mid-statement, in COMMIT) or after it (before its acknowledgement,
	// between commits).
	killAnywhere killKind = "anywhere"
)

// Plan bounds.
const (
	// maxTarget is the highest commit a held or raced kill aims at.
	maxTarget = 24
	// maxCommits is a worker's commit budget per cycle: above any target,
	// and small enough that the tables stay small over many cycles.
	maxCommits = 64
)

// killPlan is where one cycle's kill is aimed: delay after commit K's
// marker.
type killPlan struct {
	kind   killKind
	commit int
	delay  time.Duration
}

func (p killPlan) String() string {
	return fmt.Sprintf("%s at commit %d after %v", p.kind, p.commit, p.delay.Round(time.Microsecond))
}

// drawPlan draws a cycle's kill. Without the BeforeCommit hook (a mutant)
// every kill is aimed anywhere.
func drawPlan(rng *rand.Rand, hooks bool, lat latency) killPlan {
	k := 1 + rng.IntN(maxTarget)
	r := rng.IntN(3)
	switch {
	case hooks && r == 0:
		return killPlan{kind: killHeld, commit: k, delay: uniform(rng, 200*time.Microsecond)}
	case hooks && r == 1:
		return killPlan{kind: killRaced, commit: k, delay: uniform(rng, 2*lat.commit)}
	}
	return killPlan{kind: killAnywhere, commit: k, delay: uniform(rng, 2*lat.call)}
}

// trigger reports whether m starts the countdown of p's kill: commit K's
// BeforeCommit hook for held and raced kills, its announcement otherwise.
func (p killPlan) trigger(m message) bool {
	if p.kind == killAnywhere {
		return m.Type == msgBegin && m.N == p.commit
	}
	return m.Type == msgPreCommit && m.N == p.commit
}

// uniform draws a duration in [0, d].
func uniform(rng *rand.Rand, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(d) + 1))
}

// latency is what the parent has learnt of the worker's commit times, as
// moving averages: call is from the call to its return, commit from the
// BeforeCommit hook to the return. They scale the kill delays, so that the
// kills keep landing in commits on a fast disk and on a slow one.
type latency struct {
	call, commit time.Duration
}

// initialLatency is the guess before the first acknowledgement.
func initialLatency() latency {
	return latency{call: time.Millisecond, commit: 200 * time.Microsecond}
}

// observe folds an acknowledgement into the averages.
func (l *latency) observe(m message) {
	if m.Type != msgAck {
		return
	}
	l.call = ema(l.call, time.Duration(m.LatencyUS)*time.Microsecond)
	if m.CommitUS > 0 {
		l.commit = ema(l.commit, time.Duration(m.CommitUS)*time.Microsecond)
	}
}

// ema moves avg a quarter of the way to x, within [20 µs, 100 ms].
func ema(avg, x time.Duration) time.Duration {
	return min(max(avg+(x-avg)/4, 20*time.Microsecond), 100*time.Millisecond)
}
