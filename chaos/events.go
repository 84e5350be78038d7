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
// install has begun; then it is started once more (by the heal, or at once
// with Hold), to go on from whatever the interrupted install left. A random
// kill schedule reaches that window (tens of milliseconds) almost never. When the leader takes no
// snapshot in time, or the follower catches up from the log instead, the
// injection says so and counts no hit (metric install_kills).
//
// With Hold set, the traffic is held from just before the follower is
// restarted until it has been started again after the kill and the cluster
// serves; after the kill the leader steps down, and the follower is started
// again at once instead of at the heal. Without that, whatever the
// interrupted install left (a node that took the snapshot's index as
// applied without restoring its database from it, rqlite#2747) is
// overwritten before anything can see it: the leader that sent the
// snapshot keeps its next index for the follower until an install
// succeeds, so it sends a fresh snapshot, whose restore replaces the
// database. A new leader sends entries instead, from the index the
// follower says it holds, out of a log that — the traffic held, so no
// snapshot compacted it — still holds every entry after the snapshot.
type KillDuringInstall struct {
	// Hold, when set, holds the workload's traffic and returns the function
	// that lets it go on (workload.Gate's Close and Open).
	Hold func() (release func())
	// Killed, when set, is called with the follower's id right after it
	// was SIGKILLed on its install line, before anything starts it again:
	// the one moment its files show what the interrupted install left
	// (the installed snapshot in its snapshot store, its database not
	// restored from it), with no process writing them.
	Killed func(ctx context.Context, id string)
}

// Bounds of the fault's waits: a snapshot under traffic with a low
// threshold comes within a second or two; the install starts within the
// restarted node's first heartbeat exchange.
const (
	snapshotWait = 20 * time.Second
	installWait  = 15 * time.Second
	// settleWait bounds the wait, with the traffic held, for the leader's
	// snapshot of the writes that came before the hold: with
	// -raft-snap-int=1s, hashicorp/raft checks every 1–2 s.
	settleWait = 2500 * time.Millisecond
)

func (KillDuringInstall) Name() string { return "kill-during-install" }

func (KillDuringInstall) availableOn(c Cluster) error { return awaitableEvents(c) }

// awaitableEvents is what the faults that wait for a node's log line need:
// more than one node, and server events that can be awaited.
func awaitableEvents(c Cluster) error {
	if err := multiNode(c); err != nil {
		return err
	}
	ec, ok := c.(EventCluster)
	if !ok {
		return errors.New("needs a cluster whose server events can be awaited")
	}
	return ec.EventsAvailable()
}

func (f KillDuringInstall) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
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
	held := ""
	if f.Hold != nil {
		release := f.Hold()
		defer release() // on every path; released earlier once the follower is back
		// The writes before the hold may still make the leader snapshot
		// (and compact) once more: wait for that, so that the snapshot it
		// sends is its last until the traffic goes on.
		if mark, err = ec.LogMark(leader); err != nil {
			return down, err
		}
		_, _ = ec.WaitEvent(ctx, leader, "snapshot", mark, settleWait)
		held = ", the traffic held"
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
	if f.Killed != nil {
		f.Killed(ctx, id)
	}
	hit := Injection{
		Target: id, Heal: restartHeal(c, id),
		Detail: fmt.Sprintf("SIGKILL follower %s, leader %s snapshotted past it%s, %s restarted and was SIGKILLed again %.0f ms later as it began installing the snapshot (%q)",
			id, leader, held, id, float64(after.Microseconds())/1000, line),
		Metrics: map[string]float64{"install_kills": 1},
	}
	if f.Hold == nil {
		return hit, nil
	}
	// The leader that sent the snapshot keeps its next index for the
	// follower until an install succeeds, so it would send a fresh copy,
	// whose restore overwrites whatever the interrupted install left. A new
	// leader starts from its own log's end and walks back to what the
	// follower says it holds: it sends entries from there, out of a log that
	// (the traffic held) still holds every entry after the snapshot.
	// The step-down fault's own injection: whoever leads now hands over,
	// and the new leader is timed.
	sd, err := stepDown{}.injectOn(ctx, c, rng)
	if err != nil {
		return hit, fmt.Errorf("step down after the install: %w", err)
	}
	if err := c.Start(ctx, id); err != nil {
		return hit, fmt.Errorf("restart %s after the install: %w", id, err)
	}
	hit.Heal = func(ctx context.Context) error { return c.WaitHealthy(ctx, healthyWait) }
	back := time.Now()
	if err := c.WaitHealthy(ctx, healthyWait); err != nil {
		return hit, fmt.Errorf("after restarting %s: %w", id, err)
	}
	hit.Detail += fmt.Sprintf("; %s, %s was started again and the cluster served after %.0f ms, before the traffic went on",
		sd.Detail, id, float64(time.Since(back).Microseconds())/1000)
	return hit, nil
}

func (f KillDuringInstall) Available(on any) error { return onCluster{f}.Available(on) }
func (f KillDuringInstall) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}
