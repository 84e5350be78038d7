package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/raftlog"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/internal/knownissues"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload"
)

// tablesAt is a node's tables holding execution e0 at version v.
func tablesAt(id string, v int64) nodeTables {
	return nodeTables{ID: id, Dump: &model.Dump{Executions: []model.ExecutionRow{{ID: "e0", DefinitionID: "d", Version: v}}}}
}

// TestJudgeNodesNamesWhoHoldsTheWrites: a node short of an acknowledged
// version breaks durability, and the reason says which nodes are not short
// (the shape of a single diverged node, seen on a leader-stall run); nodes
// that hold every version but differ break convergence; equal nodes pass.
func TestJudgeNodesNamesWhoHoldsTheWrites(t *testing.T) {
	acked := map[string]int64{"e0": 313}
	g, err := judgeNodes([]nodeTables{tablesAt("n1", 276), tablesAt("n2", 313), tablesAt("n3", 313)}, acked, 5705)
	if g != GuaranteeDurability || err == nil {
		t.Fatalf("n1 short of v313: got %q, %v; want durability", g, err)
	}
	for _, want := range []string{"node n1 at applied index 5705", "version 276", "version 313", "n2, n3 hold every acknowledged version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("reason %q lacks %q", err, want)
		}
	}
	if _, err := judgeNodes([]nodeTables{tablesAt("n1", 276), tablesAt("n2", 276)}, acked, 9); err == nil || !strings.Contains(err.Error(), "no node holds") {
		t.Errorf("every node short: %v", err)
	}
	g, err = judgeNodes([]nodeTables{tablesAt("n1", 313), tablesAt("n2", 314)}, acked, 9)
	if g != GuaranteeConvergence || err == nil || !strings.Contains(err.Error(), "node n2 differs from node n1") {
		t.Errorf("nodes at 313 and 314: got %q, %v; want convergence", g, err)
	}
	if g, err := judgeNodes([]nodeTables{tablesAt("n1", 313), tablesAt("n2", 313)}, acked, 9); g != "" || err != nil {
		t.Errorf("equal nodes: got %q, %v", g, err)
	}
}

// TestSettledDumpsAfterALateWrite: an indeterminate commit (v314 of e0,
// acknowledged up to v313) lands while the nodes are read after the heal:
// n1 is read before it, n2 after. The cluster is correct and converges;
// read once, the nodes differ (convergence). The applied index moved while
// they were read, so they are read again, and agree.
func TestSettledDumpsAfterALateWrite(t *testing.T) {
	ctx := context.Background()
	index := []uint64{5705, 5706, 5706} // before the reads, after each reading
	applied := func(context.Context) (uint64, error) {
		i := index[0]
		index = index[1:]
		return i, nil
	}
	readings := [][]nodeTables{
		{tablesAt("n1", 313), tablesAt("n2", 314)},
		{tablesAt("n1", 314), tablesAt("n2", 314)},
	}
	dump := func(context.Context) ([]nodeTables, error) {
		r := readings[0]
		readings = readings[1:]
		return r, nil
	}
	nodes, idx, err := settledDumps(ctx, applied, dump)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := judgeNodes(nodes, map[string]int64{"e0": 313}, idx); g != "" || err != nil {
		t.Fatalf("a correct cluster with a late write: %q %v", g, err)
	}
	if idx != 5706 || len(readings) != 0 {
		t.Errorf("read at index %d with %d readings left; want 5706 and none", idx, len(readings))
	}
	// A node that cannot be read is the harness's, said apart.
	_, _, err = settledDumps(ctx, func(context.Context) (uint64, error) { return 1, nil },
		func(context.Context) ([]nodeTables, error) { return nil, fmt.Errorf("n2: no answer") })
	if !errors.As(err, new(dumpError)) {
		t.Errorf("a node that cannot be read: %v; want a dumpError", err)
	}
}

// TestInspectNodesKeepsTheEvidenceOfADivergence: with nodes that agree
// and a cluster that cannot be stopped nothing is kept; with nodes that
// diverged each node's tables and the re-reads (with which version each
// served) are kept as nodes/ID.json and nodes/rereads.txt.
func TestInspectNodesKeepsTheEvidenceOfADivergence(t *testing.T) {
	ctx := context.Background()
	nodes := []nodeTables{tablesAt("n1", 276), tablesAt("n2", 313)}
	acked := map[string]int64{"e0": 313}
	g, err := judgeNodes(nodes, acked, 7)

	quiet := t.TempDir()
	if l := inspectNodes(ctx, Params{OutDir: quiet}, nil, afterHeal{nodes: nodes}, false, nil); l.err != nil || l.checked {
		t.Errorf("nodes that agree, on a cluster that cannot be stopped: %+v", l)
	}
	if _, serr := os.Stat(filepath.Join(quiet, nodesEvidence)); !os.IsNotExist(serr) {
		t.Errorf("nodes that agree left %s (stat: %v)", nodesEvidence, serr)
	}

	dir := t.TempDir()
	reads, n1reads := 0, 0
	reread := func(_ context.Context, id string) (*model.Dump, error) {
		reads++
		if id != "n1" {
			return tablesAt(id, 313).Dump, nil
		}
		n1reads++
		if n1reads%2 == 1 {
			return tablesAt(id, 313).Dump, nil // the writes, on some reads only
		}
		return tablesAt(id, 276).Dump, nil
	}
	if l := inspectNodes(ctx, Params{OutDir: dir}, nil, afterHeal{nodes: nodes, err: err, guarantee: g, acked: acked}, false, reread); l.err != nil {
		t.Errorf("a cluster that cannot be stopped has no logs to break: %v", l.err)
	}
	if reads != 2*rereads {
		t.Errorf("%d re-reads, want %d", reads, 2*rereads)
	}
	txt, rerr := os.ReadFile(filepath.Join(dir, nodesEvidence, "rereads.txt"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	at313, at276 := digest(tablesAt("n1", 313).Dump), digest(tablesAt("n1", 276).Dump)
	for _, want := range []string{"acknowledged: e0 v313", "checks' read, node n1: tables " + at276,
		"read 1, node n1: e0 v313 tables " + at313, "read 2, node n1: e0 v276 tables " + at276, "read 1, node n2: e0 v313"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("rereads.txt lacks %q:\n%s", want, txt)
		}
	}
	for _, n := range nodes {
		raw, rerr := os.ReadFile(filepath.Join(dir, nodesEvidence, n.ID+".json"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		var back nodeTables
		if jerr := json.Unmarshal(raw, &back); jerr != nil {
			t.Fatal(jerr)
		}
		if back.ID != n.ID || len(back.Dump.Executions) != 1 || back.Dump.Executions[0].Version != n.Dump.Executions[0].Version {
			t.Errorf("%s.json holds %+v, want %+v", n.ID, back, n)
		}
	}
}

// haltedCluster is a cluster of processes already stopped: its nodes'
// folders, each with a raft.db, under dir.
type haltedCluster struct {
	cluster.Cluster // nil: nothing else is called
	dir             string
	ids             []string
	halts           int
}

func (c *haltedCluster) Nodes() []cluster.Node {
	out := make([]cluster.Node, len(c.ids))
	for i, id := range c.ids {
		out[i] = cluster.Node{ID: id}
	}
	return out
}
func (c *haltedCluster) Halt(context.Context) error { c.halts++; return nil }
func (c *haltedCluster) Dir() string                { return c.dir }
func (c *haltedCluster) SaveData(_ context.Context, dir string) error {
	return os.CopyFS(dir, os.DirFS(c.dir))
}

// TestInspectNodesChecksLogMatching: on a cluster it can stop, the nodes'
// Raft logs are compared after every run, not only after a divergence of
// their tables: logs that agree pass and keep nothing; two entries of one
// term at one index (the shape hashicorp/raft#695 leaves) fail the run as
// log matching, naming the index and what each node holds, and keep the
// logs' comparison and the data folders.
func TestInspectNodesChecksLogMatching(t *testing.T) {
	ctx := context.Background()
	cmd := func(i, term uint64, sql string) raftlog.Entry {
		return raftlog.Entry{Index: i, Term: term, Data: []byte("\x08" + sql)}
	}
	leader := []raftlog.Entry{cmd(9292, 4, "DELETE FROM timers"), {Index: 9293, Term: 5, Type: 1}}
	stale := []raftlog.Entry{cmd(9292, 4, "DELETE FROM timers"), cmd(9293, 5, "SELECT version FROM executions")}
	build := func(logs map[string][]raftlog.Entry) *haltedCluster {
		c := &haltedCluster{dir: t.TempDir(), ids: []string{"n1", "n2", "n3"}}
		for id, entries := range logs {
			if err := os.MkdirAll(filepath.Join(c.dir, id), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := raftlog.Write(filepath.Join(c.dir, id, "raft.db"), entries); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}

	agreeing := build(map[string][]raftlog.Entry{"n1": leader, "n2": leader, "n3": leader})
	out := t.TempDir()
	l := inspectNodes(ctx, Params{OutDir: out}, agreeing, afterHeal{}, false, nil)
	if l.err != nil || !l.checked || l.compared != 2 || len(l.unread) != 0 || agreeing.halts != 1 {
		t.Errorf("logs that agree: %+v (halted %d times)", l, agreeing.halts)
	}
	passed := Result{Verdict: reports.Pass, Metrics: map[string]float64{}}
	l.apply(&passed)
	if passed.Verdict != reports.Pass || passed.Metrics["raft_indexes_compared"] != 2 || passed.Reason != "" {
		t.Errorf("logs that agree, applied: %s %v %q", passed.Verdict, passed.Metrics, passed.Reason)
	}
	if _, serr := os.Stat(filepath.Join(out, nodesEvidence)); !os.IsNotExist(serr) {
		t.Errorf("logs that agree left %s (stat: %v)", nodesEvidence, serr)
	}
	// The same logs, on a run that failed otherwise (a node that did not
	// come back after the heal): the data folders are kept, for reading
	// what the nodes' files held at the end.
	failedOut := t.TempDir()
	if l := inspectNodes(ctx, Params{OutDir: failedOut}, agreeing, afterHeal{err: errors.New("recovery: after the heal: a node not ready"), guarantee: GuaranteeRecovery}, true, nil); l.err != nil {
		t.Errorf("logs that agree, the run failed: %v", l.err)
	}
	if _, serr := os.Stat(filepath.Join(failedOut, nodesEvidence, "data", "n3", "raft.db")); serr != nil {
		t.Errorf("a failed run with agreeing logs did not keep the data folders: %v", serr)
	}

	diverged := build(map[string][]raftlog.Entry{"n1": leader, "n2": leader, "n3": stale})
	out = t.TempDir()
	l = inspectNodes(ctx, Params{OutDir: out}, diverged, afterHeal{}, false, nil)
	err := l.err
	if err == nil || !strings.HasPrefix(err.Error(), GuaranteeLogMatching+": ") || !strings.Contains(err.Error(), "index 9293: n1 term 5 no-op; n2 term 5 no-op; n3 term 5 command") {
		t.Fatalf("n3 holding another term-5 entry at 9293: %v", err)
	}
	res := Result{Verdict: reports.Pass, Metrics: map[string]float64{}}
	l.apply(&res)
	if res.Verdict != reports.Fail || res.Guarantee != GuaranteeLogMatching {
		t.Errorf("a passing run with the logs broken: %s %s", res.Verdict, res.Guarantee)
	}
	failed := Result{Verdict: reports.Fail, Guarantee: "linearizability", Reason: "stale read", Metrics: map[string]float64{}}
	l.apply(&failed)
	if failed.Guarantee != "linearizability" || !strings.Contains(failed.Reason, "stale read (and "+GuaranteeLogMatching+": ") {
		t.Errorf("a failed run with the logs broken: %s %q", failed.Guarantee, failed.Reason)
	}

	// A node whose log cannot be read: nothing compared with it, and the
	// figures and the reason of a pass say so; the comparison is kept.
	unreadable := build(map[string][]raftlog.Entry{"n1": leader, "n2": leader})
	if err := os.MkdirAll(filepath.Join(unreadable.dir, "n3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unreadable.dir, "n3", "raft.db"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	unreadOut := t.TempDir()
	l = inspectNodes(ctx, Params{OutDir: unreadOut}, unreadable, afterHeal{}, false, nil)
	if !slices.Equal(l.unread, []string{"n3"}) || l.compared != 2 || l.err != nil {
		t.Errorf("n3's log unreadable: %+v", l)
	}
	partial := Result{Verdict: reports.Pass, Metrics: map[string]float64{}}
	l.apply(&partial)
	if partial.Verdict != reports.Pass || partial.Metrics["raft_logs_unread"] != 1 ||
		partial.Reason != "Raft log of n3 not read: Log Matching checked on the other nodes' logs only (nodes/raftlog.txt)" {
		t.Errorf("a pass with n3's log unread: %s %v %q", partial.Verdict, partial.Metrics, partial.Reason)
	}
	if _, serr := os.Stat(filepath.Join(unreadOut, nodesEvidence, raftLogEvidence)); serr != nil {
		t.Errorf("the comparison with n3's log unread was not kept: %v", serr)
	}
	lone := logCheck{checked: true, nodes: 3, unread: []string{"n2", "n3"}}
	alone := Result{Verdict: reports.Fail, Reason: "stale read", Metrics: map[string]float64{}}
	lone.apply(&alone)
	if !strings.HasSuffix(alone.Reason, "stale read (Raft log of n2, n3 not read: Log Matching checked not at all (nodes/raftlog.txt))") {
		t.Errorf("a failed run with two logs of three unread: %q", alone.Reason)
	}
	if is := knownissues.Lookup("raft-heartbeat-term-race"); is == nil || !slices.Contains(is.Guarantees, GuaranteeLogMatching) {
		t.Errorf("the known issue does not explain %q: %+v", GuaranteeLogMatching, is)
	}
	txt, rerr := os.ReadFile(filepath.Join(out, nodesEvidence, raftLogEvidence))
	if rerr != nil || !strings.Contains(string(txt), raftlog.BrokenMatching) {
		t.Errorf("raftlog.txt: %v\n%s", rerr, txt)
	}
	if _, serr := os.Stat(filepath.Join(out, nodesEvidence, "data", "n3", "raft.db")); serr != nil {
		t.Errorf("n3's data folder not kept: %v", serr)
	}
}

// TestAfterHealApply: a broken guarantee after the heal FAILs a run that
// passed; on a run that had failed, diverged nodes are noted and anything
// else (a node that did not recover) leaves the reason alone.
func TestAfterHealApply(t *testing.T) {
	nodes := []nodeTables{tablesAt("n1", 276), tablesAt("n2", 313)}
	g, err := judgeNodes(nodes, map[string]int64{"e0": 313}, 7)
	diverged := afterHeal{err: err, guarantee: g, nodes: nodes}

	passed := Result{Verdict: reports.Pass}
	diverged.apply(&passed)
	if passed.Verdict != reports.Fail || passed.Guarantee != GuaranteeDurability || !strings.HasPrefix(passed.Reason, "durability: node n1") {
		t.Errorf("a passing run, nodes diverged: %s %s %q", passed.Verdict, passed.Guarantee, passed.Reason)
	}
	failed := Result{Verdict: reports.Fail, Guarantee: "lost update", Reason: "lost update: c1"}
	diverged.apply(&failed)
	if failed.Guarantee != "lost update" || failed.Reason != "lost update: c1 (and after the heal, "+rqOneLine(err.Error())+")" {
		t.Errorf("a failed run, nodes diverged: %s %q", failed.Guarantee, failed.Reason)
	}
	stuck := afterHeal{err: fmt.Errorf("recovery: no leader"), guarantee: GuaranteeRecovery}
	failed = Result{Verdict: reports.Fail, Guarantee: "lost update", Reason: "lost update: c1"}
	stuck.apply(&failed)
	if failed.Reason != "lost update: c1" {
		t.Errorf("a failed run, a node that did not recover: %q", failed.Reason)
	}
	clean := Result{Verdict: reports.Pass}
	afterHeal{nodes: nodes[:1]}.apply(&clean)
	if clean.Verdict != reports.Pass {
		t.Errorf("nothing broken: %s", clean.Verdict)
	}
}

// A fault run's PASS stands only if some fault was injected: none in the
// traffic's time, or every injection failed, is NOT RUN with why; a fault
// whose heal failed was injected; a FAIL stays a FAIL.
func TestNoFaultTookEffect(t *testing.T) {
	injected := evidence.Fault{Fault: "kill-leader"}
	refused := evidence.Fault{Fault: "isolate-leader", Error: "iptables -A …: exit status 4", NotInjected: true}
	healFailed := evidence.Fault{Fault: "kill-leader", Error: "heal: restart n1: no such file"}
	for _, tc := range []struct {
		name    string
		verdict reports.Verdict
		events  []evidence.Fault
		want    reports.Verdict
		reason  string
	}{
		{"none in time", reports.Pass, nil, reports.NotRun, "the traffic ended before the schedule's first fault"},
		{"all refused", reports.Pass, []evidence.Fault{refused, refused}, reports.NotRun, "all 2 injections failed (first: isolate-leader: iptables -A …: exit status 4)"},
		{"one injected", reports.Pass, []evidence.Fault{refused, injected}, reports.Pass, ""},
		{"heal failed", reports.Pass, []evidence.Fault{healFailed}, reports.Pass, ""},
		{"a FAIL without faults", reports.Fail, nil, reports.Fail, "lost update"},
	} {
		out := Result{Verdict: tc.verdict}
		if tc.verdict == reports.Fail {
			out.Reason = "lost update"
		}
		noFaultTookEffect(&out, tc.events)
		if out.Verdict != tc.want || !strings.Contains(out.Reason, tc.reason) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, out.Verdict, out.Reason, tc.want, tc.reason)
		}
	}
}

// TestLongReadsHeld: long-reads' PASS is a PASS only when some measured
// read (an injected window's first) held the leader's database for the
// time a checkpoint waits for its readers; a run whose reads were all
// shorter never made a checkpoint wait, and is NOT RUN with the longest.
func TestLongReadsHeld(t *testing.T) {
	m := map[string]float64{}
	faultMetrics(m, &workload.Result{}, []evidence.Fault{
		{Fault: "long-reads", Metrics: map[string]float64{"long_read_ms": 120}},
		{Fault: "long-reads", Metrics: map[string]float64{"long_read_ms": 900}, NotInjected: true, Error: "first long read on n1: 503"},
		{Fault: "long-reads", Metrics: map[string]float64{"long_read_ms": 180}},
	})
	if m["long_read_ms_max"] != 180 {
		t.Errorf("long_read_ms_max %v, want 180, the longest of the injected windows' reads", m["long_read_ms_max"])
	}
	for _, tc := range []struct {
		verdict reports.Verdict
		longest float64
		want    reports.Verdict
		reason  string
	}{
		{reports.Pass, 180, reports.NotRun, "no long read held the leader's database for the 250ms a checkpoint waits for its readers (the longest measured: 180 ms)"},
		{reports.Pass, 0, reports.NotRun, "(the longest measured: 0 ms)"},
		{reports.Pass, 262, reports.Pass, "servers given"},
		{reports.Fail, 0, reports.Fail, "availability"},
	} {
		run := readsHeld(func(context.Context, Target, Params) Result {
			r := Result{Verdict: tc.verdict, Reason: "servers given", Metrics: map[string]float64{"long_read_ms_max": tc.longest}}
			if tc.verdict == reports.Fail {
				r.Reason = "availability"
			}
			return r
		})
		if got := run(context.Background(), Target{}, Params{}); got.Verdict != tc.want || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s with reads of %v ms: %s %q, want %s with %q", tc.verdict, tc.longest, got.Verdict, got.Reason, tc.want, tc.reason)
		}
	}
}
