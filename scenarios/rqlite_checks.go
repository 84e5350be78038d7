package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/workload"
)

// Guarantees the cluster checks name.
const (
	GuaranteeDurability  = "durability"
	GuaranteeConvergence = "convergence"
)

// appliedWait bounds the wait for every node to apply the whole log, and
// then for every node's file to show a barrier written after it
// (cluster.Barrier): a node slower than that after the heal did not
// recover. A restarted rqlite 10.2.7 node showed its rows 2.8–4.6 s after
// its applied index matched; a minute leaves a wide margin.
const appliedWait = 60 * time.Second

// GuaranteeRecovery is broken by a cluster whose nodes do not apply the
// log after the heal.
const GuaranteeRecovery = "recovery"

// afterHeal is what the checks after healing found: a broken guarantee
// (err, guarantee), or a reason they could not run (harness).
type afterHeal struct {
	err, harness error
	guarantee    string
	index        uint64
	// settled is how long the nodes took to show the barrier.
	settled time.Duration
}

// checkAfterHeal waits until every node has applied the leader's whole log,
// reads each node's six tables with level none (what that node holds, not
// what the leader says), and checks that they are identical (convergence)
// and that every node holds every execution at least at the highest
// version a commit of the history was acknowledged for (durability).
func checkAfterHeal(ctx context.Context, cs clusterStore, h linearizability.History) afterHeal {
	cl := cs.Cluster()
	idx, err := cluster.WaitApplied(ctx, cl, appliedWait)
	if err != nil {
		return afterHeal{err: fmt.Errorf("%s: after the heal: %w", GuaranteeRecovery, err), guarantee: GuaranteeRecovery}
	}
	// The applied index is not the file: wait until every node's own
	// file shows a barrier written after everything the checks compare.
	settled, err := cluster.Barrier(ctx, cl, appliedWait)
	if err != nil {
		return afterHeal{err: fmt.Errorf("%s: after the heal: %w", GuaranteeRecovery, err), guarantee: GuaranteeRecovery, index: idx}
	}
	acked := ackedVersions(h)
	var first *model.Dump
	var firstID string
	for _, n := range cl.Nodes() {
		d, err := dumpNode(ctx, cs, n.ID)
		if err != nil {
			return afterHeal{harness: err, index: idx}
		}
		if err := durable(d, acked); err != nil {
			return afterHeal{err: fmt.Errorf("%s: node %s at applied index %d: %w", GuaranteeDurability, n.ID, idx, err), guarantee: GuaranteeDurability, index: idx}
		}
		if first == nil {
			first, firstID = d, n.ID
			continue
		}
		if diffs := model.Diff(first, d, model.DiffOptions{ExactSeqs: true, Limit: 5}); len(diffs) > 0 {
			return afterHeal{err: fmt.Errorf("%s: at applied index %d node %s differs from node %s: %s",
				GuaranteeConvergence, idx, n.ID, firstID, strings.Join(diffs, "; ")), guarantee: GuaranteeConvergence, index: idx}
		}
	}
	return afterHeal{index: idx, settled: settled}
}

// dumpNode reads one node's tables at level none.
func dumpNode(ctx context.Context, cs clusterStore, id string) (*model.Dump, error) {
	view, err := cs.NodeView(id, rqlite.LevelNone)
	if err != nil {
		return nil, err
	}
	defer view.Close()
	d, err := view.Dump(ctx)
	if err != nil {
		return nil, fmt.Errorf("read node %s: %w", id, err)
	}
	return d, nil
}

// ackedVersions maps each execution to the highest version a commit or
// save of the traffic was acknowledged at.
func ackedVersions(h linearizability.History) map[string]int64 {
	out := map[string]int64{}
	for _, op := range h.Ops {
		if !op.Heal && op.Kind.IsCommit() && op.Output.Outcome == linearizability.OutcomeOK {
			out[op.Execution] = max(out[op.Execution], op.Input.Expected+1)
		}
	}
	return out
}

// durable checks that d holds every execution at least at its acknowledged
// version.
func durable(d *model.Dump, acked map[string]int64) error {
	held := map[string]int64{}
	for _, r := range d.Executions {
		held[r.ID] = r.Version
	}
	ids := make([]string, 0, len(acked))
	for id := range acked {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		v, ok := held[id]
		switch {
		case !ok:
			return fmt.Errorf("execution %s is missing, but version %d was acknowledged", id, acked[id])
		case v < acked[id]:
			return fmt.Errorf("execution %s is at version %d, but version %d was acknowledged", id, v, acked[id])
		}
	}
	return nil
}

// faultMetrics adds the fault figures: how many faults, the time to a new
// leader, commit latency, and the conflict and indeterminate rates of
// commits that started during a fault against those that did not.
func faultMetrics(m map[string]float64, res *workload.Result, events []evidence.Fault) {
	m["faults"] = float64(len(events))
	var leader []float64
	for _, ev := range events {
		if n, ok := ev.Metrics["install_kills"]; ok {
			m["install_kills"] += n
		}
		if ms, ok := ev.Metrics["new_leader_ms"]; ok {
			leader = append(leader, ms)
		}
	}
	if len(leader) > 0 {
		m["new_leader_ms_max"] = slices.Max(leader)
		m["new_leader_ms_mean"] = mean(leader)
	}
	type tally struct{ commits, conflicts, indeterminate int }
	var in, out tally
	var lat []float64
	for _, op := range res.History.Ops {
		if op.Heal || !op.Kind.IsCommit() {
			continue
		}
		t := &out
		if inWindow(op.Call, events) {
			t = &in
		}
		t.commits++
		switch op.Output.Outcome {
		case linearizability.OutcomeConflict:
			t.conflicts++
		case linearizability.OutcomeIndeterminate:
			t.indeterminate++
		}
		if op.Output.Outcome != linearizability.OutcomeIndeterminate {
			lat = append(lat, float64(op.Return-op.Call)/1e6)
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		m["commit_p50_ms"] = lat[len(lat)/2]
		m["commit_p99_ms"] = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	for name, t := range map[string]tally{"faulted": in, "quiet": out} {
		m["commits_"+name] = float64(t.commits)
		if t.commits > 0 {
			m["conflict_rate_"+name] = float64(t.conflicts) / float64(t.commits)
			m["indeterminate_rate_"+name] = float64(t.indeterminate) / float64(t.commits)
		}
	}
}

func inWindow(t int64, events []evidence.Fault) bool {
	for _, ev := range events {
		if t >= ev.StartNS && (ev.EndNS == 0 || t <= ev.EndNS) {
			return true
		}
	}
	return false
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
