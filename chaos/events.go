package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// EventCluster is a Cluster whose servers' events can be awaited as they
// happen (read from a process cluster's live logs): "snapshot" (a node took
// a snapshot and may truncate its log), "snapshot-install" (a node is
// installing a snapshot its leader sent).
type EventCluster interface {
	Cluster
	// EventsAvailable says why events cannot be awaited here, or nil.
	EventsAvailable() error
	// LogMark marks the present in node id's log; WaitEvent(…, mark, …)
	// sees only what comes after it.
	LogMark(id string) (int64, error)
	// WaitEvent waits until node id shows event after mark, at most
	// timeout, and returns what showed it.
	WaitEvent(ctx context.Context, id, event string, mark int64, timeout time.Duration) (string, error)
}

// KillDuringInstall aims at the recovery path where real clusters still
// break: a follower is killed, the leader takes a snapshot past it (a low
// snapshot threshold, e.g. rqlited -raft-snap=50, makes this quick), the
// follower is started again — so that it must catch up by installing the
// leader's snapshot — and it is SIGKILLed the moment it logs that the
// install has begun; the heal starts it once more, to install again from
// whatever the interrupted install left. A random kill schedule reaches
// that window (tens of milliseconds) almost never. When the leader takes no
// snapshot in time, or the follower catches up from the log instead, the
// injection says so and counts no hit (metric install_kills).
type KillDuringInstall struct{}

// Bounds of the fault's waits: a snapshot under traffic with a low
// threshold comes within a second or two; the install starts within the
// restarted node's first heartbeat exchange.
const (
	snapshotWait = 20 * time.Second
	installWait  = 15 * time.Second
)

func (KillDuringInstall) Name() string { return "kill-during-install" }

func (KillDuringInstall) availableOn(c Cluster) error {
	if err := multiNode(c); err != nil {
		return err
	}
	ec, ok := c.(EventCluster)
	if !ok {
		return errors.New("needs a cluster whose server events can be awaited")
	}
	return ec.EventsAvailable()
}

func (KillDuringInstall) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	ec := c.(EventCluster)
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	id, err := pickFollower(ctx, c, rng)
	if err != nil {
		return Injection{}, err
	}
	down := Injection{Target: id, Heal: restartHeal(c, id), Metrics: map[string]float64{"install_kills": 0}}
	if err := c.Kill(ctx, id); err != nil {
		return down, err
	}
	var mark int64
	// Two snapshots: the first may have begun before the kill and keep the
	// follower's entries among its trailing logs; the second, a snapshot
	// interval later, is past them under any traffic.
	for range 2 {
		mark, err = ec.LogMark(leader)
		if err != nil {
			return down, err
		}
		if _, err := ec.WaitEvent(ctx, leader, "snapshot", mark, snapshotWait); err != nil {
			down.Detail = fmt.Sprintf("SIGKILL follower %s; leader %s took no snapshot past it (%v): no install to interrupt", id, leader, err)
			return down, ctx.Err()
		}
	}
	fmark, err := ec.LogMark(id)
	if err != nil {
		return down, err
	}
	if err := c.Start(ctx, id); err != nil {
		return down, fmt.Errorf("restart %s: %w", id, err)
	}
	started := time.Now()
	running := Injection{Target: id, Metrics: map[string]float64{"install_kills": 0},
		Heal: func(ctx context.Context) error { return c.WaitHealthy(ctx, healthyWait) }}
	line, err := ec.WaitEvent(ctx, id, "snapshot-install", fmark, installWait)
	if err != nil {
		running.Detail = fmt.Sprintf("SIGKILL follower %s, leader %s snapshotted past it, %s restarted and caught up without installing a snapshot (%v)", id, leader, id, err)
		return running, ctx.Err()
	}
	after := time.Since(started)
	if err := c.Kill(ctx, id); err != nil {
		return Injection{Target: id, Heal: restartHeal(c, id)}, err
	}
	return Injection{
		Target: id, Heal: restartHeal(c, id),
		Detail: fmt.Sprintf("SIGKILL follower %s, leader %s snapshotted past it, %s restarted and was SIGKILLed again %.0f ms later as it began installing the snapshot (%q)",
			id, leader, id, float64(after.Microseconds())/1000, line),
		Metrics: map[string]float64{"install_kills": 1},
	}, nil
}

func (f KillDuringInstall) Available(on any) error { return onCluster{f}.Available(on) }
func (f KillDuringInstall) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}
