package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
)

// Every node, during the run. The checks after the heal see each node once
// it has been repaired; a node that hid acknowledged rows, or showed rows
// nobody committed, while it was down-and-back or cut off would be repaired
// before they look. So while the faults run, each node is read on its own
// at level none (its local SQLite file, no leader involved), and each read
// goes into the history as a replica read named after the node and the
// life of its process ("node n2#1": n2 after its first kill or stop). The
// replica rules hold them to: a version some commit wrote, called before
// the read returned (never one nobody committed), and never less than an
// earlier read of the same node in the same process life (monotonic).
// Across a restart a node may legitimately come back older at level none
// (rqlite restores its snapshot and replays its log; measured at 2.8–4.6 s
// of old rows after a kill, docs/SOAK.md): that is counted, not failed
// (nodeRegressions), since level none promises no freshness.

// nodeReadEvery is how often each node is read on its own: several times
// within a fault (faults last seconds), a few reads a second per node
// beside traffic of hundreds of operations a second.
const nodeReadEvery = 250 * time.Millisecond

// nodeReadTimeout bounds one such read: a dead or frozen node's read fails
// after it, and the node is read again at the next tick.
const nodeReadTimeout = time.Second

// lives counts each node's process lives as the run's faults kill, stop
// and start its nodes.
type lives struct {
	cluster.Cluster
	mu sync.Mutex
	n  map[string]int
}

func countLives(c cluster.Cluster) *lives { return &lives{Cluster: c, n: map[string]int{}} }

// Kill ends a process life once the process is gone.
func (l *lives) Kill(ctx context.Context, id string) error {
	err := l.Cluster.Kill(ctx, id)
	l.end(id, err)
	return err
}

// Stop ends a process life once the process has stopped.
func (l *lives) Stop(ctx context.Context, id string) error {
	err := l.Cluster.Stop(ctx, id)
	l.end(id, err)
	return err
}

// LogPath is the cluster's, where it has one (process clusters), so that
// faults can wait for server events through the count.
func (l *lives) LogPath(id string) (string, error) {
	lp, ok := l.Cluster.(interface{ LogPath(string) (string, error) })
	if !ok {
		return "", fmt.Errorf("a %s cluster keeps no live log", l.Kind())
	}
	return lp.LogPath(id)
}

// PacketLossAvailable and LosePackets are the cluster's, where it has
// them (process clusters), so that faults can degrade links through the
// count.
func (l *lives) PacketLossAvailable() error {
	return cluster.Control{Cluster: l.Cluster}.PacketLossAvailable()
}

func (l *lives) LosePackets(ctx context.Context, id string, fraction float64) error {
	return cluster.Control{Cluster: l.Cluster}.LosePackets(ctx, id, fraction)
}

func (l *lives) end(id string, err error) {
	if err != nil {
		return
	}
	l.mu.Lock()
	l.n[id]++
	l.mu.Unlock()
}

// of is node id's current life, 0 for the first.
func (l *lives) of(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[id]
}

// nodePrefix starts the history's name of a node reader.
const nodePrefix = "node "

// nodeName is the history's name of node id in its life k.
func nodeName(id string, k int) string { return fmt.Sprintf("%s%s#%d", nodePrefix, id, k) }

// observeNodes reads every node of cs on its own, every nodeReadEvery
// (nodeReadsAtOnce reads at once), for executions drawn from the seed,
// until ctx ends.
func observeNodes(cs clusterStore, l *lives, seed uint64) func(context.Context, []string, func(model.Store, string) *linearizability.Client) error {
	return func(ctx context.Context, execs []string, newClient func(model.Store, string) *linearizability.Client) error {
		nodes := cs.Cluster().Nodes()
		views := make([]*rqlite.Store, 0, len(nodes))
		defer func() {
			for _, v := range views {
				v.Close()
			}
		}()
		for _, n := range nodes {
			v, err := cs.NodeView(n.ID, rqlite.LevelNone)
			if err != nil {
				return fmt.Errorf("read node %s on its own: %w", n.ID, err)
			}
			views = append(views, v)
		}
		var wg sync.WaitGroup
		for i, n := range nodes {
			rng := rand.New(rand.NewPCG(seed, uint64(i)+1))
			wg.Go(func() { readNode(ctx, views[i], n.ID, l, execs, rng, newClient) })
		}
		wg.Wait()
		return nil
	}
}

// nodeReadsAtOnce is how many reads of a node each tick sends together:
// a node that serves concurrent reads from copies of different ages (a
// pool of read connections, one holding an old read transaction) goes
// back in time only when its reads overlap, which one read at a time never
// shows (docs/DETECTION.md).
const nodeReadsAtOnce = 2

// readNode is one node's reader: each tick, nodeReadsAtOnce loads at once,
// each from a history client of its own per process life, all named after
// the node's life (the replica rules hold them together), then a read of
// its outbox.
func readNode(ctx context.Context, view model.Store, id string, l *lives, execs []string, rng *rand.Rand, newClient func(model.Store, string) *linearizability.Client) {
	type slot struct{ life, n int }
	clients := map[slot]*linearizability.Client{}
	tick := time.NewTicker(nodeReadEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		k := l.of(id)
		var wg sync.WaitGroup
		for n := range nodeReadsAtOnce {
			exec := execs[rng.IntN(len(execs))]
			c := clients[slot{k, n}]
			if c == nil {
				c = newClient(view, nodeName(id, k))
				clients[slot{k, n}] = c
			}
			wg.Go(func() {
				rctx, cancel := context.WithTimeout(ctx, nodeReadTimeout)
				defer cancel()
				_, _ = c.Load(rctx, exec) // a failed read is recorded as failed
			})
		}
		wg.Wait()
		// Then the outbox, by the first reader once its load has returned:
		// the prefix rules (linearizability/prefix.go) hold the two
		// together, so a node that showed a commit's row and then lists the
		// outbox without its emit (or the other way round) showed part of a
		// commit, which a read of one table never shows.
		rctx, cancel := context.WithTimeout(ctx, nodeReadTimeout)
		_, _ = clients[slot{k, 0}].PendingOutbox(rctx)
		cancel()
	}
}

// nodeReadCounts are the per-node reads of a history: how many, how many
// answered, and how many answers showed less than the same node had shown
// in an earlier process life (a regression across a restart, allowed at
// level none; see above).
type nodeReadCounts struct {
	Reads, Answered, Regressions int
	// FirstRegression describes the first regression, "" when none.
	FirstRegression string
}

// countNodeReads reads the node reads back from h.
func countNodeReads(h linearizability.History) nodeReadCounts {
	var c nodeReadCounts
	type key struct{ node, exec string }
	floor := map[key]int64{}    // highest version shown in the node's earlier lives
	thisLife := map[key]int64{} // highest in the life being read
	life := map[string]string{} // node → the life last seen
	for _, op := range h.Ops {
		name, ok := strings.CutPrefix(op.Replica, nodePrefix)
		if !ok || op.Kind != linearizability.KindLoad {
			continue
		}
		id, _, _ := strings.Cut(name, "#")
		c.Reads++
		if op.Output.Outcome != linearizability.OutcomeOK {
			continue
		}
		c.Answered++
		if life[id] != name {
			// A new life of the node: what the last one showed is the
			// floor it should not go under.
			for k, v := range thisLife {
				if k.node == id {
					floor[k] = max(floor[k], v)
					delete(thisLife, k)
				}
			}
			life[id] = name
		}
		k := key{id, op.Execution}
		v := int64(0)
		if op.Output.Exists {
			v = op.Output.Version
		}
		if f, ok := floor[k]; ok && v < f {
			c.Regressions++
			if c.FirstRegression == "" {
				c.FirstRegression = fmt.Sprintf(nodePrefix+"%s showed %s at version %d at %.2f s, less than the %d it showed before it went down",
					name, op.Execution, v, float64(op.Call)/1e9, f)
			}
		}
		thisLife[k] = max(thisLife[k], v)
	}
	return c
}

// nodeMetrics adds the node reads' counts to out, and names a regression
// across a restart in a passing run's reason (it is allowed, and shown).
func nodeMetrics(out *Result, h linearizability.History) {
	c := countNodeReads(h)
	out.Metrics["node_reads"] = float64(c.Reads)
	out.Metrics["node_reads_answered"] = float64(c.Answered)
	out.Metrics["node_regressions_after_restart"] = float64(c.Regressions)
	if c.Regressions > 0 && out.Verdict == reports.Pass {
		out.Reason = strings.TrimSpace(out.Reason + fmt.Sprintf(" %d node read(s) showed less than the node had shown before a restart, allowed at level none (first: %s)", c.Regressions, c.FirstRegression))
	}
}
