package scenarios

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/raftlog"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
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
	// nodes are the tables each node held, read at level none, in node
	// order (none when the checks stopped before reading them).
	nodes []nodeTables
	// acked is the highest acknowledged version of each execution.
	acked map[string]int64
}

// nodeTables is one node's tables after the heal.
type nodeTables struct {
	ID   string      `json:"node"`
	Dump *model.Dump `json:"tables"`
}

// diverged says whether the nodes' tables are the evidence of the broken
// guarantee: a node missing an acknowledged write, or nodes that differ.
func (a afterHeal) diverged() bool {
	return a.err != nil && (a.guarantee == GuaranteeDurability || a.guarantee == GuaranteeConvergence)
}

// apply puts the checks' verdict into out, the history's result: a broken
// guarantee FAILs a run that had passed; on a run that had failed already,
// nodes that diverged are noted in the reason (they may explain it: a heal
// read served by a node short of a write is a lost update in the history).
// A harness error is the caller's to judge.
func (a afterHeal) apply(out *Result) {
	switch {
	case a.err == nil:
	case out.Verdict == reports.Pass:
		out.Verdict, out.Guarantee, out.Reason = reports.Fail, a.guarantee, rqOneLine(a.err.Error())
	case out.Verdict == reports.Fail && a.diverged():
		out.Reason += " (and after the heal, " + rqOneLine(a.err.Error()) + ")"
	}
}

// checkAfterHeal waits until every node has applied the leader's whole log,
// reads each node's six tables with level none (what that node holds, not
// what the leader says), and checks that every node holds every execution
// at least at the highest version a commit of the history was acknowledged
// for (durability) and that they are identical (convergence). A durability
// failure names the first node short of a version and which nodes are not.
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
	out := afterHeal{index: idx, settled: settled}
	applied := func(ctx context.Context) (uint64, error) { return cluster.WaitApplied(ctx, cl, appliedWait) }
	dump := func(ctx context.Context) ([]nodeTables, error) {
		var nodes []nodeTables
		for _, n := range cl.Nodes() {
			d, err := dumpNode(ctx, cs, n.ID)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, nodeTables{ID: n.ID, Dump: d})
		}
		return nodes, nil
	}
	nodes, _, err := settledDumps(ctx, applied, dump)
	if err != nil {
		var unread dumpError
		if errors.As(err, &unread) {
			out.harness = unread.err
			return out
		}
		return afterHeal{err: fmt.Errorf("%s: after the heal: %w", GuaranteeRecovery, err), guarantee: GuaranteeRecovery, index: out.index}
	}
	out.nodes = nodes
	out.acked = ackedVersions(h)
	out.guarantee, out.err = judgeNodes(out.nodes, out.acked, out.index)
	return out
}

// dumpRounds bounds how many times settledDumps reads the nodes.
const dumpRounds = 3

// dumpError is a node whose tables could not be read: a harness error,
// not a finding.
type dumpError struct{ err error }

func (e dumpError) Error() string { return e.err.Error() }
func (e dumpError) Unwrap() error { return e.err }

// settledDumps reads every node's tables (dump) and then looks at the
// applied index again (applied, which waits until every node has applied
// the same last index twice): if the index moved while the nodes were
// read, a write landed between two nodes' reads and they may differ
// although neither is wrong, so the nodes are read again, up to dumpRounds
// times. The traffic's calls have all ended by now, but one whose outcome
// was unknown (indeterminate: it timed out on a frozen or dying node) may
// still be applied late: queued in a node's socket while it was frozen,
// or sent again by a forwarder. It returns the last reading and the index
// it was taken at; a node that could not be read is a dumpError, an index
// that could not be had is the error applied gave.
func settledDumps(ctx context.Context, applied func(context.Context) (uint64, error), dump func(context.Context) ([]nodeTables, error)) ([]nodeTables, uint64, error) {
	before, err := applied(ctx)
	if err != nil {
		return nil, 0, err
	}
	var nodes []nodeTables
	for range dumpRounds {
		if nodes, err = dump(ctx); err != nil {
			return nil, before, dumpError{err}
		}
		after, err := applied(ctx)
		if err != nil {
			return nil, before, err
		}
		if after == before {
			break
		}
		before = after
	}
	return nodes, before, nil
}

// judgeNodes checks the nodes' tables after the heal: every node holds
// every execution at least at its acknowledged version (durability), and
// all hold the same tables (convergence). It returns the broken guarantee
// and why, or "" and nil.
func judgeNodes(nodes []nodeTables, acked map[string]int64, idx uint64) (string, error) {
	var short error
	var shortID string
	var whole []string
	for _, n := range nodes {
		if err := durable(n.Dump, acked); err != nil {
			if short == nil {
				short, shortID = err, n.ID
			}
			continue
		}
		whole = append(whole, n.ID)
	}
	if short != nil {
		holders := "no node holds every acknowledged version"
		switch len(whole) {
		case 0:
		case 1:
			holders = whole[0] + " holds every acknowledged version"
		default:
			holders = strings.Join(whole, ", ") + " hold every acknowledged version"
		}
		return GuaranteeDurability, fmt.Errorf("%s: node %s at applied index %d: %w (%s)", GuaranteeDurability, shortID, idx, short, holders)
	}
	for _, n := range nodes[1:] {
		if diffs := model.Diff(nodes[0].Dump, n.Dump, model.DiffOptions{ExactSeqs: true, Limit: 5}); len(diffs) > 0 {
			return GuaranteeConvergence, fmt.Errorf("%s: at applied index %d node %s differs from node %s: %s",
				GuaranteeConvergence, idx, n.ID, nodes[0].ID, strings.Join(diffs, "; "))
		}
	}
	return "", nil
}

// nodesEvidence is the folder, within a run's, that holds each node's
// tables (ID.json) and data folder (data/ID) when the nodes diverged, and
// raftLogEvidence, in it, the comparison of the nodes' Raft logs.
const (
	nodesEvidence   = "nodes"
	raftLogEvidence = "raftlog.txt"
)

// rereads is how many times inspectNodes reads every node again, rereadGap
// apart, before the nodes are stopped.
const (
	rereads   = 5
	rereadGap = 200 * time.Millisecond
)

// GuaranteeLogMatching is broken by nodes whose Raft logs hold different
// entries of one term at one index (Raft's Log Matching property): they
// applied different commands at the same position.
const GuaranteeLogMatching = "log matching"

// haltable is a cluster whose nodes storecheck can stop and whose files it
// can then read (a cluster of processes).
type haltable interface {
	Halt(ctx context.Context) error
	// Dir holds each node's data folder as Dir()/ID.
	Dir() string
	SaveData(ctx context.Context, dir string) error
}

// inspectNodes ends a fault run on the cluster's nodes. When they diverged
// after the heal it reads each of them rereads more times first. Then, on
// a cluster of processes, it stops them (SIGKILL) and compares their Raft
// logs: a broken Log Matching is nodes that applied different commands at
// one position, whatever their tables show. When the
// nodes diverged or their logs broke Log Matching, the run's folder keeps
// the evidence under nodes/: each node's tables as it served them
// (ID.json); the re-reads, with the versions each served of the executions
// a node fell short of (rereads.txt: a node that serves a version sometimes
// and not always has the writes in its file and an old view on some
// connection); each node's data folder, its SQLite file, Raft log and
// snapshots (data/ID); and the comparison of the logs (raftlog.txt).
// A run that failed for any other reason (failed: a node that did not
// come back, a history the checks rejected) keeps the same, so that what
// a node's files held at the end can be read after the run. reread is nil
// when the nodes cannot be read again. The nodes stay down. It returns
// what it found of the logs, for logCheck.apply.
func inspectNodes(ctx context.Context, p Params, cl cluster.Cluster, after afterHeal, failed bool, reread func(context.Context, string) (*model.Dump, error)) (logs logCheck) {
	var again string
	if after.diverged() && reread != nil {
		again = readAgain(ctx, after, reread)
	}
	var c raftlog.Comparison
	halted := false
	h, halts := cl.(haltable)
	if halts {
		logs.checked = true
		ids := make([]string, 0, len(cl.Nodes()))
		for _, n := range cl.Nodes() {
			ids = append(ids, n.ID)
		}
		if err := h.Halt(ctx); err != nil {
			c.Text = fmt.Sprintf("the nodes could not be stopped to read their Raft logs: %v\n", err)
			c.Unread = ids
		} else {
			halted = true
			c = raftlog.Report(h.Dir(), ids)
		}
		logs.compared, logs.unread, logs.nodes = c.Shared, c.Unread, len(ids)
	}
	if failed || after.diverged() || c.Breaks() || len(c.Unread) > 0 {
		keepNodes(ctx, p, after, again, c.Text, h, halted)
	}
	if c.Breaks() {
		logs.err = fmt.Errorf("%s: %s", GuaranteeLogMatching, c.Line())
	}
	return logs
}

// logCheck is what inspectNodes found of the nodes' Raft logs.
type logCheck struct {
	checked bool // the cluster's logs could be looked at (processes)
	// compared is how many indexes more than one node's log held; unread
	// the nodes whose logs could not be read, of nodes.
	compared, nodes int
	unread          []string
	err             error // a broken Log Matching
}

// apply puts the comparison into out: its figures, and a broken Log
// Matching as the verdict of a run that had passed, a note on one that had
// failed. A log that could not be read is said in the reason too: a pass
// then holds for the other nodes' logs only, or, with fewer than two read,
// says nothing of Log Matching.
func (l logCheck) apply(out *Result) {
	if !l.checked {
		return
	}
	out.Metrics["raft_indexes_compared"] = float64(l.compared)
	out.Metrics["raft_logs_unread"] = float64(len(l.unread))
	switch {
	case l.err == nil:
	case out.Verdict == reports.Pass:
		out.Verdict, out.Guarantee, out.Reason = reports.Fail, GuaranteeLogMatching, rqOneLine(l.err.Error())
	default:
		out.Reason += " (and " + rqOneLine(l.err.Error()) + ")"
	}
	if len(l.unread) > 0 {
		scope := "on the other nodes' logs only"
		if l.nodes-len(l.unread) < 2 {
			scope = "not at all"
		}
		note := fmt.Sprintf("Raft log of %s not read: Log Matching checked %s (nodes/%s)", strings.Join(l.unread, ", "), scope, raftLogEvidence)
		if out.Reason == "" {
			out.Reason = note
		} else {
			out.Reason += " (" + note + ")"
		}
	}
}

// keepNodes writes inspectNodes' evidence into the run's folder.
func keepNodes(ctx context.Context, p Params, after afterHeal, again, logs string, h haltable, halted bool) {
	f := folder(p)
	if f.None() {
		return
	}
	warn := func(what string, err error) {
		if p.Logger != nil {
			p.Logger.Warn("could not keep the nodes' evidence", "what", what, "err", err)
		}
	}
	nodes := f.Phase(nodesEvidence)
	for _, n := range after.nodes {
		data, err := json.MarshalIndent(n, "", " ")
		if err == nil {
			_, err = nodes.WriteFile(n.ID+".json", data)
		}
		if err != nil {
			warn(n.ID+".json", err)
		}
	}
	for name, text := range map[string]string{"rereads.txt": again, raftLogEvidence: logs} {
		if text == "" {
			continue
		}
		if _, err := nodes.WriteFile(name, []byte(text)); err != nil {
			warn(name, err)
		}
	}
	if halted {
		if err := h.SaveData(ctx, nodes.Path("data")); err != nil {
			warn("data folders", err)
		}
	}
}

// readAgain reads every node rereads times and says, per read, which
// version it served of each execution some node was short of in the
// checks' read, and a digest of all it served (the same digest on every
// read of a node: its view did not move; the same on two nodes: they now
// agree).
func readAgain(ctx context.Context, after afterHeal, reread func(context.Context, string) (*model.Dump, error)) string {
	short := map[string]bool{}
	for _, n := range after.nodes {
		held := versions(n.Dump)
		for id, v := range after.acked {
			if held[id] < v {
				short[id] = true
			}
		}
	}
	ids := make([]string, 0, len(short))
	for id := range short {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "each node read %d more times at level none, %v apart, after the checks' read\n", rereads, rereadGap)
	if len(ids) > 0 {
		fmt.Fprintf(&b, "acknowledged:")
		for _, id := range ids {
			fmt.Fprintf(&b, " %s v%d", id, after.acked[id])
		}
		b.WriteString("\n")
	}
	for _, n := range after.nodes {
		fmt.Fprintf(&b, "checks' read, node %s: tables %s\n", n.ID, digest(n.Dump))
	}
	for i := range rereads {
		if i > 0 {
			select {
			case <-ctx.Done():
				return b.String()
			case <-time.After(rereadGap):
			}
		}
		for _, n := range after.nodes {
			fmt.Fprintf(&b, "read %d, node %s:", i+1, n.ID)
			d, err := reread(ctx, n.ID)
			if err != nil {
				fmt.Fprintf(&b, " error: %v\n", err)
				continue
			}
			held := versions(d)
			for _, id := range ids {
				fmt.Fprintf(&b, " %s v%d", id, held[id])
			}
			fmt.Fprintf(&b, " tables %s\n", digest(d))
		}
	}
	return b.String()
}

// digest is a short hash of a node's tables as JSON.
func digest(d *model.Dump) string {
	raw, err := json.Marshal(d)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:6])
}

// versions maps each execution of d to its version.
func versions(d *model.Dump) map[string]int64 {
	out := make(map[string]int64, len(d.Executions))
	for _, r := range d.Executions {
		out[r.ID] = r.Version
	}
	return out
}

// nodeReader reads a node of cs's cluster again, for inspectNodes.
func nodeReader(cs clusterStore) func(context.Context, string) (*model.Dump, error) {
	return func(ctx context.Context, id string) (*model.Dump, error) { return dumpNode(ctx, cs, id) }
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
	held := versions(d)
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

// noFaultTookEffect turns a PASS into NOT RUN when no fault of the
// schedule was injected: the traffic ended before the first one (a
// --duration shorter than the schedule's first quiet interval), or every
// injection failed. Such a run checked a cluster without faults, which is
// not what the scenario claims to have tried.
func noFaultTookEffect(out *Result, events []evidence.Fault) {
	if out.Verdict != reports.Pass {
		return
	}
	why := whyNoFault(events, "the traffic ended before the schedule's first fault (give a longer --duration)")
	if why == "" {
		return
	}
	out.Verdict = reports.NotRun
	out.Reason = strings.TrimSuffix("no fault was injected: "+why+"; "+out.Reason, "; ")
}

// whyNoFault says why a fault timeline shows no injected fault — every
// injection failed, or, none tried, none — or "" when one was. A fault
// whose heal failed was injected (the heal's own check says so).
func whyNoFault(events []evidence.Fault, none string) string {
	var failed []string
	for _, ev := range events {
		if !ev.NotInjected {
			return ""
		}
		failed = append(failed, ev.Fault+": "+ev.Error)
	}
	if len(failed) > 0 {
		return fmt.Sprintf("all %d injections failed (first: %s)", len(failed), rqOneLine(failed[0]))
	}
	return none
}

// faultMetrics adds the fault figures: how many faults, the time to a new
// leader, the longest of long-reads' measured reads, commit latency, and the conflict and indeterminate rates of
// commits that started during a fault against those that did not.
func faultMetrics(m map[string]float64, res *workload.Result, events []evidence.Fault) {
	m["faults"] = float64(len(events))
	var leader []float64
	for _, ev := range events {
		for _, k := range []string{"install_kills", "persist_kills"} {
			if n, ok := ev.Metrics[k]; ok {
				m[k] += n
			}
		}
		if ms, ok := ev.Metrics["new_leader_ms"]; ok {
			leader = append(leader, ms)
		}
		if ms, ok := ev.Metrics["long_read_ms"]; ok && !ev.NotInjected {
			m["long_read_ms_max"] = max(m["long_read_ms_max"], ms)
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
