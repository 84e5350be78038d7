package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// KillDuringSnapshot aims at the moment a node makes a snapshot of its own
// final: a follower is SIGKILLed as soon as its live log says it has
// written a snapshot's data ("snapshot-persist"), which is when
// hashicorp/raft closes the snapshot's sink and the server's snapshot
// store renames it into place, folds the previous snapshot into it and
// reaps the older ones; then it is started again (by the heal). A node
// killed between two of those steps restarts from whatever they left: a
// store that lists the wrong snapshot (rqlite#1580, 8.x before 8.16.2,
// restarts from the oldest, whose data was already folded into the
// newest) cannot start, or restores an older state. A random kill
// reaches that window (milliseconds a second) almost never. When the
// follower logs no persisted snapshot in time, the injection says so and
// counts no hit (metric persist_kills).
type KillDuringSnapshot struct{}

// persistWait bounds the wait for a follower's next snapshot: with a low
// snapshot threshold (-raft-snap=50,-raft-snap-int=1s) every node
// snapshots within a second or two under traffic.
const persistWait = 10 * time.Second

func (KillDuringSnapshot) Name() string { return "kill-during-snapshot" }

func (KillDuringSnapshot) availableOn(c Cluster) error { return awaitableEvents(c) }

func (KillDuringSnapshot) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	ec := c.(EventCluster)
	id, err := pickFollower(ctx, c, rng)
	if err != nil {
		return Injection{}, err
	}
	mark, err := ec.LogMark(id)
	if err != nil {
		return Injection{}, err
	}
	line, err := ec.WaitEvent(ctx, id, "snapshot-persist", mark, persistWait)
	if err != nil {
		// Nothing was done to the cluster: no fault, no heal.
		return Injection{Target: id, Metrics: map[string]float64{"persist_kills": 0},
			Detail: fmt.Sprintf("follower %s persisted no snapshot within %s (%v): nothing killed", id, persistWait, err)}, ctx.Err()
	}
	if err := c.Kill(ctx, id); err != nil {
		return Injection{Target: id, Heal: restartHeal(c, id)}, err
	}
	return Injection{
		Target: id, Heal: restartHeal(c, id),
		Detail:  fmt.Sprintf("SIGKILL follower %s as it logged a persisted snapshot (%q)", id, line),
		Metrics: map[string]float64{"persist_kills": 1},
	}, nil
}

func (f KillDuringSnapshot) Available(on any) error { return onCluster{f}.Available(on) }
func (f KillDuringSnapshot) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}
