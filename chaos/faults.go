package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/storecheck/storecheck/internal/wait"
)

// The faults, as values.
var (
	// KillLeader SIGKILLs (docker kills) the leader, measures the time to a
	// new leader, and heals by starting it again on its data.
	KillLeader Fault = onCluster{killLeader{}}
	// StallFollower freezes a follower (SIGSTOP, docker pause) and heals by
	// thawing it.
	StallFollower Fault = onCluster{stallFollower{}}
	// IsolateLeader cuts the leader off from the majority (iptables DROP on
	// loopback, docker network disconnect), measures the time to a new
	// leader on the majority side, and heals by rejoining it.
	IsolateLeader Fault = onCluster{isolate{leader: true}}
	// IsolateFollower cuts a follower off from the others.
	IsolateFollower Fault = onCluster{isolate{}}
	// StepDown asks the leader to hand over (POST /leader) and measures the
	// time to the new leader; nothing to heal.
	StepDown Fault = onCluster{stepDown{}}
	// KillFollower SIGKILLs (docker kills) a follower and heals by starting
	// it again on its data: it must catch up on what it missed.
	KillFollower Fault = onCluster{killFollower{}}
	// PauseLeader freezes the leader (SIGSTOP, docker pause) for the
	// schedule's window and heals by thawing it. A window shorter than the
	// leader's lease (rqlite's default is 500 ms), as a garbage collector's
	// pause or a stolen CPU makes, ends with no election: the same leader
	// wakes to what the others sent it while it slept, some of it from
	// senders that have given up waiting.
	PauseLeader Fault = onCluster{pauseLeader{}}
)

// Restart stops one node gracefully and heals by starting it again; a
// schedule of Restart{n1}, Restart{n2}, … in order is a rolling restart.
type Restart struct{ Node string }

// All lists the faults that pick their own target.
func All() []Fault {
	return []Fault{KillLeader, KillFollower, StallFollower, IsolateLeader, IsolateFollower, StepDown, StallLeader{}, PauseLeader}
}

type killFollower struct{}

func (killFollower) Name() string                { return "kill-follower" }
func (killFollower) availableOn(c Cluster) error { return multiNode(c) }
func (killFollower) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	id, err := pickFollower(ctx, c, rng)
	if err != nil {
		return Injection{}, err
	}
	inj := Injection{Target: id, Detail: "SIGKILL follower " + id, Heal: restartHeal(c, id)}
	return inj, c.Kill(ctx, id)
}

type killLeader struct{}

func (killLeader) Name() string                { return "kill-leader" }
func (killLeader) availableOn(c Cluster) error { return multiNode(c) }
func (killLeader) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	start := time.Now()
	if err := c.Kill(ctx, leader); err != nil {
		// It may or may not have died: starting it again is the heal.
		return Injection{Target: leader, Heal: restartHeal(c, leader)}, err
	}
	inj := Injection{Target: leader, Heal: restartHeal(c, leader)}
	next, ms, err := timeNewLeader(ctx, c, leader, start)
	if err != nil {
		return inj, fmt.Errorf("after killing leader %s: %w", leader, err)
	}
	inj.Detail = fmt.Sprintf("SIGKILL leader %s; %s leads after %.0f ms", leader, next, ms)
	inj.Metrics = map[string]float64{"new_leader_ms": ms}
	return inj, nil
}

// restartHeal starts id again and waits for the whole cluster to serve.
func restartHeal(c Cluster, id string) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := c.Start(ctx, id); err != nil {
			return fmt.Errorf("restart %s: %w", id, err)
		}
		return c.WaitHealthy(ctx, healthyWait)
	}
}

type stallFollower struct{}

func (stallFollower) Name() string                { return "stall-follower" }
func (stallFollower) availableOn(c Cluster) error { return multiNode(c) }
func (stallFollower) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	id, err := pickFollower(ctx, c, rng)
	if err != nil {
		return Injection{}, err
	}
	heal := thawHeal(c, id)
	if err := c.Pause(ctx, id); err != nil {
		return Injection{Target: id, Heal: heal}, err
	}
	return Injection{Target: id, Detail: "follower " + id + " frozen", Heal: heal}, nil
}

// thawHeal thaws id and waits for the whole cluster to serve.
func thawHeal(c Cluster, id string) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := c.Resume(ctx, id); err != nil {
			return fmt.Errorf("resume %s: %w", id, err)
		}
		return c.WaitHealthy(ctx, healthyWait)
	}
}

type pauseLeader struct{}

func (pauseLeader) Name() string                { return "pause-leader" }
func (pauseLeader) availableOn(c Cluster) error { return multiNode(c) }
func (pauseLeader) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	heal := thawHeal(c, leader)
	if err := c.Pause(ctx, leader); err != nil {
		return Injection{Target: leader, Heal: heal}, err
	}
	return Injection{Target: leader, Detail: "leader " + leader + " frozen", Heal: heal}, nil
}

type isolate struct{ leader bool }

func (f isolate) Name() string {
	if f.leader {
		return "isolate-leader"
	}
	return "isolate-follower"
}

func (isolate) availableOn(c Cluster) error {
	return errors.Join(multiNode(c), c.IsolationAvailable())
}

func (f isolate) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	var id string
	var err error
	if f.leader {
		id, err = c.Leader(ctx)
	} else {
		id, err = pickFollower(ctx, c, rng)
	}
	if err != nil {
		return Injection{}, err
	}
	inj := Injection{Target: id, Detail: id + " cut off from the others", Heal: func(ctx context.Context) error {
		if err := c.Rejoin(ctx, id); err != nil {
			return fmt.Errorf("rejoin %s: %w", id, err)
		}
		return c.WaitHealthy(ctx, healthyWait)
	}}
	start := time.Now()
	if err := c.Isolate(ctx, id); err != nil {
		return inj, err
	}
	if f.leader {
		next, ms, err := timeNewLeader(ctx, c, id, start)
		if err != nil {
			return inj, fmt.Errorf("after isolating leader %s: %w", id, err)
		}
		inj.Detail = fmt.Sprintf("leader %s cut off from the majority; %s leads after %.0f ms", id, next, ms)
		inj.Metrics = map[string]float64{"new_leader_ms": ms}
	}
	return inj, nil
}

type stepDown struct{}

func (stepDown) Name() string                { return "step-down" }
func (stepDown) availableOn(c Cluster) error { return multiNode(c) }
func (stepDown) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	start := time.Now()
	if err := c.StepDown(ctx); err != nil {
		return Injection{Target: leader}, err
	}
	next, ms, err := timeNewLeader(ctx, c, leader, start)
	if err != nil {
		return Injection{Target: leader}, fmt.Errorf("after %s stepped down: %w", leader, err)
	}
	return Injection{Target: leader, Detail: fmt.Sprintf("%s stepped down; %s leads after %.0f ms", leader, next, ms),
		Metrics: map[string]float64{"new_leader_ms": ms}}, nil
}

func (r Restart) Name() string { return "restart" }
func (r Restart) availableOn(c Cluster) error {
	for _, id := range c.NodeIDs() {
		if id == r.Node {
			return multiNode(c)
		}
	}
	return fmt.Errorf("no node %q", r.Node)
}

func (r Restart) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	leader, _ := c.Leader(ctx)
	inj := Injection{Target: r.Node, Heal: restartHeal(c, r.Node)}
	if err := c.Stop(ctx, r.Node); err != nil {
		return inj, err
	}
	inj.Detail = "graceful stop of " + r.Node
	if r.Node == leader {
		inj.Detail += " (the leader)"
	}
	return inj, nil
}

// Isolate cuts one given node off from the others and heals by rejoining
// it: for a scenario that reads from that node.
type Isolate struct{ Node string }

func (f Isolate) Name() string { return "isolate" }
func (f Isolate) availableOn(c Cluster) error {
	return errors.Join(Restart(f).availableOn(c), c.IsolationAvailable())
}

func (f Isolate) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	inj := Injection{Target: f.Node, Detail: f.Node + " cut off from the others", Heal: func(ctx context.Context) error {
		if err := c.Rejoin(ctx, f.Node); err != nil {
			return fmt.Errorf("rejoin %s: %w", f.Node, err)
		}
		return c.WaitHealthy(ctx, healthyWait)
	}}
	return inj, c.Isolate(ctx, f.Node)
}

// Restart and Isolate are faults on a cluster given by value.

func (r Restart) Available(on any) error { return onCluster{r}.Available(on) }
func (r Restart) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{r}.Inject(ctx, on, rng)
}

func (f Isolate) Available(on any) error { return onCluster{f}.Available(on) }
func (f Isolate) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}

// StallLeader freezes the leader (SIGSTOP, docker pause) until another
// node leads, holds it frozen while the new leader takes writes, and thaws
// it. A leader paused past an election still believes it leads when it
// wakes, until it next hears from the others: reads it serves from its
// own state in that window (rqlite's level=weak) can miss writes the new
// leader acknowledged. The window closes within milliseconds of the thaw,
// when its lease check finds the others gone, so a read must already be
// waiting at the frozen node to fall into it: OnResume, when set, is
// called with the frozen node Gather before it is thawed, so that a
// scenario can send its reads there and they queue up. A read is stale
// only if a write it should see was acknowledged before it was sent, so
// the traffic must go on while the node is frozen: OnFrozen, when set, is
// called once another node leads, with both, so that a scenario can send
// its reads to the new leader until the gather.
type StallLeader struct {
	OnFrozen func(frozen, leader string)
	OnResume func(id string)
	Gather   time.Duration
}

func (StallLeader) Name() string                { return "stall-leader" }
func (StallLeader) availableOn(c Cluster) error { return multiNode(c) }

func (f StallLeader) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	inj := Injection{Target: leader, Heal: func(ctx context.Context) error {
		if f.OnResume != nil {
			f.OnResume(leader)
			wait.Sleep(ctx, f.Gather)
		}
		if err := c.Resume(ctx, leader); err != nil {
			return fmt.Errorf("resume %s: %w", leader, err)
		}
		return c.WaitHealthy(ctx, healthyWait)
	}}
	start := time.Now()
	if err := c.Pause(ctx, leader); err != nil {
		return inj, err
	}
	next, ms, err := timeNewLeader(ctx, c, leader, start)
	if err != nil {
		return inj, fmt.Errorf("after freezing leader %s: %w", leader, err)
	}
	if f.OnFrozen != nil {
		f.OnFrozen(leader, next)
	}
	inj.Detail = fmt.Sprintf("leader %s frozen; %s leads after %.0f ms; %s is thawed at the heal", leader, next, ms, leader)
	inj.Metrics = map[string]float64{"new_leader_ms": ms}
	return inj, nil
}

func (f StallLeader) Available(on any) error { return onCluster{f}.Available(on) }
func (f StallLeader) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}

// KillAfterAck SIGKILLs the leader a few milliseconds (Delay, at most; the
// exact delay drawn from the schedule's seed) after the next write it
// acknowledged, which Acks signals (workload.Config.OnAck feeds it): the
// window where a commit is acknowledged but perhaps not yet on a majority's
// disks, or where a new leader may answer before it has committed an entry
// of its own term (Raft §8). A random schedule lands there rarely; this one
// always does. Heal restarts it.
type KillAfterAck struct {
	Acks  <-chan struct{}
	Delay time.Duration
}

func (KillAfterAck) Name() string                { return "kill-after-ack" }
func (KillAfterAck) availableOn(c Cluster) error { return multiNode(c) }

// ackWait bounds the wait for an acknowledgement: traffic that commits
// nothing for this long has stopped.
const ackWait = 10 * time.Second

func (f KillAfterAck) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	drain(f.Acks) // an acknowledgement from before the fault is not the one
	noAck := time.NewTimer(ackWait)
	defer noAck.Stop()
	select {
	case <-f.Acks:
	case <-noAck.C:
		return Injection{}, fmt.Errorf("kill-after-ack: no write acknowledged within %v", ackWait)
	case <-ctx.Done():
		return Injection{}, ctx.Err()
	}
	acked := time.Now()
	var delay time.Duration
	if f.Delay > 0 {
		delay = time.Duration(rng.Int64N(int64(f.Delay) + 1))
	}
	wait.Sleep(ctx, delay)
	after := time.Since(acked) // when the kill is sent; Kill returns once the node is gone
	if err := c.Kill(ctx, leader); err != nil {
		return Injection{Target: leader, Heal: restartHeal(c, leader)}, err
	}
	inj := Injection{Target: leader, Heal: restartHeal(c, leader)}
	next, ms, err := timeNewLeader(ctx, c, leader, acked.Add(after))
	if err != nil {
		return inj, fmt.Errorf("after killing leader %s: %w", leader, err)
	}
	inj.Detail = fmt.Sprintf("SIGKILL sent to leader %s %.1f ms after an acknowledged write; %s leads after %.0f ms", leader, float64(after.Microseconds())/1000, next, ms)
	inj.Metrics = map[string]float64{"new_leader_ms": ms, "kill_after_ack_ms": float64(after.Microseconds()) / 1000}
	return inj, nil
}

func (f KillAfterAck) Available(on any) error { return onCluster{f}.Available(on) }
func (f KillAfterAck) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}

// drain empties ch without blocking.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
