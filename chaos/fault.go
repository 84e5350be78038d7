// Package chaos injects faults into a running cluster while a workload runs,
// and records when each began and ended.
//
// A fault is a value behind the small Fault interface, in the manner of
// etcd's failpoints: it names itself, says whether it can run on a given
// cluster (Available), and injects itself, returning the Injection that
// says what it hit and how to heal it. A Schedule (interval, duration,
// jitter, all drawn from the seed) runs faults one after another for as
// long as its context lives; every injection is healed at the end of its
// window, and whatever could not be healed then is healed again at the end
// (Run never returns with a fault in place that it knows how to undo).
// Every fault is added, as it ends, to an evidence.Timeline: an
// evidence.Fault on the history's clock, written to the run folder's
// faults.jsonl.
//
// The package knows nothing of rqlite: a Cluster is the few operations the
// faults need, which backends/rqlite/cluster.Control provides.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Cluster is what faults do to a cluster. Node ids are those Nodes lists.
type Cluster interface {
	// Kind names the kind of cluster ("process", "container").
	Kind() string
	// NodeIDs lists the nodes.
	NodeIDs() []string
	// Leader returns the node that leads now.
	Leader(ctx context.Context) (string, error)
	// WaitLeader waits until a node other than except leads and serves.
	WaitLeader(ctx context.Context, except string, timeout time.Duration) (string, error)
	// WaitHealthy waits until every node serves and knows the leader.
	WaitHealthy(ctx context.Context, timeout time.Duration) error
	Kill(ctx context.Context, id string) error
	Stop(ctx context.Context, id string) error
	Start(ctx context.Context, id string) error
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
	Isolate(ctx context.Context, id string) error
	Rejoin(ctx context.Context, id string) error
	// IsolationAvailable says why Isolate cannot work here, or nil.
	IsolationAvailable() error
	// StepDown makes the leader hand over leadership.
	StepDown(ctx context.Context) error
}

// Fault is one kind of fault. It acts on what a step of a schedule or a
// plan gives it — a cluster, a set of replicas, a worker process — and
// says through Available whether that offers the control it needs.
type Fault interface {
	// Name is the fault's name in reports ("kill-leader").
	Name() string
	// Available says why the fault cannot act on on, or nil.
	Available(on any) error
	// Inject breaks on and returns how to heal it. Random choices (which
	// follower) come from rng. On error, the Injection's Heal, if set,
	// still undoes whatever was done.
	Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error)
}

// clusterFault is a fault that acts on a Cluster.
type clusterFault interface {
	Name() string
	availableOn(c Cluster) error
	injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error)
}

// onCluster makes a clusterFault a Fault.
type onCluster struct{ f clusterFault }

func (o onCluster) Name() string { return o.f.Name() }

func (o onCluster) Available(on any) error {
	c, ok := on.(Cluster)
	if !ok {
		return fmt.Errorf("%s acts on a server cluster, not on %T", o.f.Name(), on)
	}
	return o.f.availableOn(c)
}

func (o onCluster) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	c, ok := on.(Cluster)
	if !ok {
		return Injection{}, fmt.Errorf("%s acts on a server cluster, not on %T", o.f.Name(), on)
	}
	return o.f.injectOn(ctx, c, rng)
}

// Injection is one injected fault.
type Injection struct {
	// Target is the node it hit; Detail says more, in words.
	Target, Detail string
	// Metrics are figures it measured, e.g. "new_leader_ms".
	Metrics map[string]float64
	// Heal undoes it and waits for the cluster to serve again; nil when
	// there is nothing to undo.
	Heal func(ctx context.Context) error
}

// Timeouts of the faults' own waits.
const (
	// electionWait bounds the wait for a new leader.
	electionWait = 30 * time.Second
	// healthyWait bounds the wait for a healed cluster to serve.
	healthyWait = 60 * time.Second
)

// ErrNoFollower is returned when a fault needs a follower and there is none.
var ErrNoFollower = errors.New("no follower to pick")

// pickFollower picks a node that does not lead, at random.
func pickFollower(ctx context.Context, c Cluster, rng *rand.Rand) (string, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return "", err
	}
	var followers []string
	for _, id := range c.NodeIDs() {
		if id != leader {
			followers = append(followers, id)
		}
	}
	if len(followers) == 0 {
		return "", ErrNoFollower
	}
	return followers[rng.IntN(len(followers))], nil
}

// multiNode is the Available of faults that need a cluster of several
// nodes.
func multiNode(c Cluster) error {
	if len(c.NodeIDs()) < 3 {
		return errors.New("needs a cluster of at least 3 nodes, so that a majority survives")
	}
	return nil
}

// timeNewLeader waits for a leader other than old and returns how long
// that took since start, in milliseconds.
func timeNewLeader(ctx context.Context, c Cluster, old string, start time.Time) (string, float64, error) {
	id, err := c.WaitLeader(ctx, old, electionWait)
	if err != nil {
		return "", 0, err
	}
	return id, float64(time.Since(start).Microseconds()) / 1000, nil
}
