package scenarios

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/managed"
	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/internal/knownissues"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload"
)

var rqlitedFlag = flag.String("rqlited", "", "path to rqlited (default $RQLITED, then PATH)")

// needRqlited returns the rqlited binary, or skips the test as NOT RUN.
func needRqlited(t *testing.T) string {
	t.Helper()
	bin, err := cluster.FindRqlited(*rqlitedFlag)
	if err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	return bin
}

// needIsolation skips a test whose scenario cuts a node off (iptables
// rules, nodes under user ids of their own) where that cannot be done: the
// scenario would end NOT RUN, which such a test must report as NOT RUN, not
// as a failed expectation.
func needIsolation(t *testing.T) {
	t.Helper()
	if err := cluster.FirewallAvailable(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
}

// opened records the stores a target opened, to look at their clusters
// after the run.
type opened struct {
	mu     sync.Mutex
	stores []*managed.Store
}

func (o *opened) target(t *testing.T, url string) Target {
	tg := mustTarget(t, url)
	tg.Opener = func(ctx context.Context, url string, cfg model.Config) (model.Store, error) {
		s, err := backends.Open(ctx, url, cfg)
		if ms, ok := s.(*managed.Store); ok {
			o.mu.Lock()
			o.stores = append(o.stores, ms)
			o.mu.Unlock()
		}
		return s, err
	}
	return tg
}

// assertCleanedUp checks that nothing a recorded store's cluster started is
// left: no process, data folder or iptables chain; no container, network
// or image of the run.
func (o *opened) assertCleanedUp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.stores) == 0 {
		t.Fatal("no cluster was opened")
	}
	// A failed open left nothing to record; StartProcesses and
	// StartContainers remove what they started before returning the error.
	chains, _ := cluster.LeftoverChains(ctx)
	for _, s := range o.stores {
		switch c := s.Cluster().(type) {
		case *cluster.Processes:
			for _, pid := range c.PIDs() {
				t.Errorf("rqlited pid %d still running", pid)
			}
			if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("cluster folder %s left behind", c.Dir())
			}
			for _, ch := range chains {
				if ch == c.Chain() {
					t.Errorf("iptables chain %s left behind", ch)
				}
			}
		case *cluster.Containers:
			left, err := cluster.Leftovers(ctx, c.Run())
			if err != nil || len(left) > 0 {
				t.Errorf("left behind: %v (%v)", left, err)
			}
		}
	}
}

// TestRqliteScenariosNotRun: without a cluster the rqlite scenarios do not
// apply to other backends, and report NOT RUN, quickly and with the
// reason, when the cluster cannot start.
func TestRqliteScenariosNotRun(t *testing.T) {
	for _, sc := range rqliteScenarios() {
		if ok, why := sc.Applies(mustTarget(t, "memory:").Target); ok || why == "" {
			t.Errorf("%s applies to memory:", sc.Name)
		}
		if ok, _ := sc.Applies(mustTarget(t, "rqlite+container:?nodes=3").Target); !ok {
			t.Errorf("%s does not apply to rqlite+container:", sc.Name)
		}
		start := time.Now()
		url := "rqlite+process:?rqlited=" + filepath.Join(t.TempDir(), "no-rqlited")
		res := sc.Run(context.Background(), mustTarget(t, url), Params{Seed: 1})
		if res.Verdict != reports.NotRun || !strings.Contains(res.Reason, "rqlited") || time.Since(start) > 5*time.Second {
			t.Errorf("%s: %s %q after %v", sc.Name, res.Verdict, res.Reason, time.Since(start))
		}
	}
}

// TestFailedStartLogsInRunFolder: when the cluster's servers fail to
// start, the NOT RUN reason points at the run folder's logs/, and the logs
// are there after the run (the cluster's own folder is gone by then).
func TestFailedStartLogsInRunFolder(t *testing.T) {
	bindir, err := os.MkdirTemp("", "storecheck-fake-rqlited-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bindir) })
	if err := os.Chmod(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(bindir, "rqlited")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'fake rqlited: cannot start' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []Scenario{rqliteScenarios()[0], followerReadScenario(), concurrentScenario()} {
		t.Run(sc.Name, func(t *testing.T) {
			dir := t.TempDir()
			url := "rqlite+process:?nodes=3&rqlited=" + bin
			start := time.Now()
			res := sc.Run(context.Background(), mustTarget(t, url), Params{Seed: 1, OutDir: dir})
			logs := evidence.At(dir).LogDir()
			if res.Verdict != reports.NotRun || !strings.Contains(res.Reason, logs) || time.Since(start) > 20*time.Second {
				t.Errorf("%s %q after %v; want NOT RUN naming %s", res.Verdict, res.Reason, time.Since(start), logs)
			}
			// The first node to fail ends the start and the others are
			// killed, perhaps before their script printed: one log must
			// hold the server's own words, and every node's log is there.
			said := false
			for _, n := range []string{"n1", "n2", "n3"} {
				b, err := os.ReadFile(filepath.Join(logs, n+".log"))
				if err != nil {
					t.Errorf("%s.log is not in the run folder: %v", n, err)
				}
				said = said || strings.Contains(string(b), "fake rqlited: cannot start")
			}
			if !said {
				t.Errorf("no node's log in the run folder holds the server's output")
			}
		})
	}
}

// TestFollowerReadHazard: reads at level none from a follower cut off from
// the others are caught as stale (Illegal, drawn with the fault window); at
// level strong the same run passes. Either way nothing is left behind.
func TestFollowerReadHazard(t *testing.T) {
	bin := needRqlited(t)
	needIsolation(t)
	for _, c := range []struct {
		level string
		want  reports.Verdict
	}{{"none", reports.Fail}, {"strong", reports.Pass}, {"linearizable", reports.Pass}} {
		t.Run(c.level, func(t *testing.T) {
			var o opened
			dir := t.TempDir()
			url := "rqlite+process:?nodes=3&level=" + c.level + "&rqlited=" + bin
			res := followerReadScenario().Run(context.Background(), o.target(t, url),
				Params{Seed: 3, OutDir: dir, Clients: 6, Executions: 2, Duration: 12 * time.Second})
			t.Logf("%s: %s %s %s", c.level, res.Verdict, res.Guarantee, res.Reason)
			if res.Verdict != c.want {
				t.Fatalf("level %s: verdict %s (%s), want %s", c.level, res.Verdict, res.Reason, c.want)
			}
			if c.want == reports.Fail {
				if res.Guarantee != "linearizability" {
					t.Errorf("guarantee %q, want linearizability (a stale read)", res.Guarantee)
				}
				html, err := os.ReadFile(filepath.Join(dir, evidence.VisualizationFile))
				if err != nil || !strings.Contains(string(html), "isolate") {
					t.Errorf("visualization without the fault window (%v)", err)
				}
			}
			o.assertCleanedUp(t)
		})
	}
}

// TestRqliteCleanup: after a run that passed, one that failed (above) and
// one that was interrupted, nothing of the cluster remains.
func TestRqliteCleanup(t *testing.T) {
	bin := needRqlited(t)
	url := "rqlite+process:?nodes=3&rqlited=" + bin
	t.Run("passed", func(t *testing.T) {
		needIsolation(t)
		var o opened
		sc, _ := Lookup("partition-leader")
		res := sc.Run(context.Background(), o.target(t, url), Params{Seed: 2, OutDir: t.TempDir(), Clients: 4, Executions: 2, Duration: 8 * time.Second})
		if res.Verdict != reports.Pass {
			t.Errorf("verdict %s: %s", res.Verdict, res.Reason)
		}
		o.assertCleanedUp(t)
	})
	t.Run("interrupted", func(t *testing.T) {
		var o opened
		ctx, cancel := context.WithTimeout(context.Background(), 7*time.Second)
		defer cancel()
		sc, _ := Lookup("leader-kill")
		res := sc.Run(ctx, o.target(t, url), Params{Seed: 2, OutDir: t.TempDir(), Duration: time.Minute})
		if res.Verdict != reports.Interrupted {
			t.Errorf("verdict %s: %s", res.Verdict, res.Reason)
		}
		o.assertCleanedUp(t)
	})
}

// TestContainerCleanup runs a fault scenario on containers from a
// throwaway image built from the local rqlited, and checks that the
// containers, the network and the image are gone afterwards.
func TestContainerCleanup(t *testing.T) {
	bin := needRqlited(t)
	if err := cluster.CheckStatic(bin); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	if err := cluster.DockerAvailable(context.Background()); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	var o opened
	url := "rqlite+container:?nodes=3&image=build&rqlited=" + bin
	sc, _ := Lookup("follower-stall")
	res := sc.Run(context.Background(), o.target(t, url), Params{Seed: 4, OutDir: t.TempDir(), Clients: 4, Executions: 2, Duration: 8 * time.Second})
	if res.Verdict != reports.Pass {
		t.Errorf("verdict %s: %s", res.Verdict, res.Reason)
	}
	o.assertCleanedUp(t)
}

// TestVersionGuardMutantOnRealCluster: the rqlite protocol with side-writes
// guarded on `version = new` (the leak the seed warns about), run on a real
// 3-node cluster, is caught — and the seed's guard, on the same seed, is not.
func TestVersionGuardMutantOnRealCluster(t *testing.T) {
	bin := needRqlited(t)
	conc, err := Lookup("concurrent")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		guard string
		want  reports.Verdict
	}{{"version", reports.Fail}, {"prestate", reports.Pass}} {
		t.Run(c.guard, func(t *testing.T) {
			var o opened
			url := "rqlite+process:?nodes=3&guard=" + c.guard + "&rqlited=" + bin
			res := conc.Run(context.Background(), o.target(t, url), Params{Seed: 5, OutDir: t.TempDir(), Clients: 12, Executions: 2, Ops: 1500})
			t.Logf("guard=%s: %s %s %s", c.guard, res.Verdict, res.Guarantee, res.Reason)
			if res.Verdict != c.want {
				t.Fatalf("guard=%s: verdict %s (%s), want %s", c.guard, res.Verdict, res.Reason, c.want)
			}
			o.assertCleanedUp(t)
		})
	}
}

// TestLeaderStall freezes the leader past an election, lets the new one
// take writes, and sends every read to the old one as it thaws. At level
// strong the old leader must confirm its leadership first: PASS. The
// faults must each have seen a new leader elected in election time (the
// leader search does not wait on the frozen node).
func TestLeaderStall(t *testing.T) {
	bin := needRqlited(t)
	var o opened
	dir := keptOnFailure(t)
	url := "rqlite+process:?nodes=3&level=strong&rqlited=" + bin
	res := leaderStallScenario().Run(context.Background(), o.target(t, url),
		Params{Seed: 1, OutDir: dir, Clients: 6, Executions: 2, Duration: 24 * time.Second})
	t.Logf("%s %s %s", res.Verdict, res.Guarantee, res.Reason)
	skipIfKnownIssue(t, res, dir, "leader-stall")
	if res.Verdict != reports.Pass {
		t.Fatalf("level strong: verdict %s (%s), want PASS", res.Verdict, res.Reason)
	}
	faults, err := evidence.ReadFaults(filepath.Join(dir, evidence.FaultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(faults) < 2 {
		t.Fatalf("%d faults in 24 s, want at least 2: %+v", len(faults), faults)
	}
	for _, f := range faults {
		if f.Fault != "stall-leader" || f.Error != "" {
			t.Errorf("fault %+v", f)
		}
		if ms := f.Metrics["new_leader_ms"]; ms <= 0 || ms > 8000 {
			t.Errorf("%s: a new leader after %.0f ms; rqlite elects in about 2 s", f.Target, ms)
		}
	}
	o.assertCleanedUp(t)
}

// TestLeaderStallCatchesWeakReads: at level weak a leader thawed after an
// election serves the reads that waited for it from its own, stale state
// before it learns it was deposed; the scenario catches that as a stale
// read. The window is a race after the thaw (caught in 10 of 10 seeds at the default four stalls,
// docs/DETECTION.md), so up to three seeds are tried and one catch is
// required: one 48 s run missed 6 of 48 times alone (2026-12-02), and both
// of two seeds missed once with the other rqlite packages' tests beside it.
//
// Which read shows it first is timing too: a load or load_for_event (a
// register stale read, placed in the stall), a read_trace (no linearization
// of the trace ring), or a pending_outbox listing (a queue stale read). Each
// is a read served from a state already overwritten, and each is a catch;
// the same scenario at level strong passes (TestLeaderStall). A FAIL of any
// other guarantee (a lost update, a phantom) is not this hazard and fails
// the test.
func TestLeaderStallCatchesWeakReads(t *testing.T) {
	bin := needRqlited(t)
	var o opened
	url := "rqlite+process:?nodes=3&level=weak&rqlited=" + bin
	var reasons, struck []string
	for _, seed := range []uint64{1, 2, 3} {
		dir := t.TempDir()
		res := leaderStallScenario().Run(context.Background(), o.target(t, url),
			Params{Seed: seed, OutDir: dir, Clients: 8, Executions: 4, Duration: leaderStallDuration})
		t.Logf("seed %d: %s %s %s", seed, res.Verdict, res.Guarantee, res.Reason)
		if res.Verdict == reports.Fail && staleReadGuarantees[res.Guarantee] {
			o.assertCleanedUp(t)
			return
		}
		if is := knownIssueOf(res, dir, "leader-stall"); is != nil {
			// The deposed leader's diverged log, not the weak read: this
			// seed says nothing of the hazard either way.
			kept := keptOnFailure(t)
			_ = os.CopyFS(kept, os.DirFS(dir))
			struck = append(struck, fmt.Sprintf("seed %d: known issue %s (%s), evidence in %s", seed, is.ID, is.Upstream, kept))
			t.Log(struck[len(struck)-1])
			continue
		}
		reasons = append(reasons, fmt.Sprintf("seed %d: %s %s", seed, res.Verdict, res.Reason))
	}
	o.assertCleanedUp(t) // a run that caught nothing must leave nothing either
	if len(reasons) == 0 {
		t.Skipf("NOT RUN: every seed was struck by a known upstream issue:\n%s", strings.Join(struck, "\n"))
	}
	t.Fatalf("no stale read at the thawed leader in three runs at level weak:\n%s", strings.Join(append(reasons, struck...), "\n"))
}

// knownIssueOf returns the known upstream issue whose signature res, a
// FAIL of scenario on a process cluster whose folder is dir, carries in its
// own evidence, or nil. Any guarantee: once the nodes' Raft logs diverged, a
// diverged node may lead and answer from its own state (seen at level
// strong: linearizability and duplicate delivery FAILs with the logs
// broken), so the run cannot show that a correct server passes.
func knownIssueOf(res Result, dir, scenario string) *knownissues.Issue {
	if res.Verdict != reports.Fail {
		return nil
	}
	return knownissues.Struck("rqlite+process", scenario, dir)
}

// skipIfKnownIssue reports the test NOT RUN when its run FAILed by a known
// upstream issue (docs/KNOWN-ISSUES.md), naming it and the kept evidence: a
// test that asserts a correct cluster passes cannot say so of a run the
// server's own bug struck, and must not hide the FAIL as a PASS either.
func skipIfKnownIssue(t *testing.T, res Result, dir, scenario string) {
	t.Helper()
	if is := knownIssueOf(res, dir, scenario); is != nil {
		t.Skipf("NOT RUN: known upstream issue %s (%s) struck: %s; evidence in %s", is.ID, is.Upstream, res.Reason, dir)
	}
}

// staleReadGuarantees are the guarantees a read served from an old state
// breaks (linearizability names the register's and the trace ring's).
var staleReadGuarantees = map[string]bool{
	linearizability.ErrLinearizability.Error(): true,
	linearizability.ErrTraceRing.Error():       true,
	linearizability.ErrStaleRead.Error():       true,
}

// TestKillAfterAck: every kill of the schedule is sent within a few
// milliseconds of an acknowledged write (the window a random schedule
// rarely hits), and a correct cluster keeps every acknowledged write
// through it. Its reads are at level=linearizable, which a new leader
// serves from its own state: one that answers before it has committed an
// entry of its own term misses writes the old leader acknowledged (rqlite
// 8.32.0–8.32.3 did: docs/DETECTION.md); strong reads go through the log
// and cannot.
func TestKillAfterAck(t *testing.T) {
	var o opened
	_, _, faults := passFaultScenario(t, &o, "kill-after-ack", "&level=linearizable", 16*time.Second)
	if len(faults) < 2 {
		t.Fatalf("%d faults in 16 s, want at least 2: %+v", len(faults), faults)
	}
	for _, f := range faults {
		ms, ok := f.Metrics["kill_after_ack_ms"]
		if f.Fault != "kill-after-ack" || f.Error != "" || !ok {
			t.Errorf("fault %+v", f)
		}
		// 5 ms of drawn delay; more is the machine's scheduling.
		if ms > 100 {
			t.Errorf("%s: killed %.1f ms after the acknowledgement", f.Target, ms)
		}
	}
	o.assertCleanedUp(t)
}

// TestKillDuringInstall: with a low snapshot threshold, a follower that
// comes back behind the leader's snapshot is killed while it installs it,
// and a correct cluster keeps every acknowledged write through it; the
// nodes were read on their own all along, and those reads are in the
// history.
func TestKillDuringInstall(t *testing.T) {
	var o opened
	res, dir, _ := passFaultScenario(t, &o, "kill-during-install", "&flags=-raft-snap=50,-raft-snap-int=1s", 30*time.Second)
	if res.Metrics["install_kills"] < 1 {
		t.Errorf("no install was interrupted: %v", res.Metrics)
	}
	if res.Metrics["node_reads"] < 30 || res.Metrics["node_reads_answered"] < 10 {
		t.Errorf("node reads %v; want every node read several times a second", res.Metrics)
	}
	h, err := linearizability.LoadFile(filepath.Join(dir, evidence.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, op := range h.Ops {
		if name, ok := strings.CutPrefix(op.Replica, "node "); ok {
			id, _, _ := strings.Cut(name, "#")
			nodes[id] = true
		}
	}
	if len(nodes) != 3 {
		t.Errorf("node reads in the history from %v; want all three nodes", nodes)
	}
	o.assertCleanedUp(t)
}

// TestLongReads: a correct cluster, its servers given a low snapshot
// threshold by the scenario, keeps serving while its leader's database is
// held by one long read after another; each window's first read is
// measured, and takes long enough to meet a snapshot.
func TestLongReads(t *testing.T) {
	var o opened
	res, _, faults := passFaultScenario(t, &o, "long-reads", "", 12*time.Second)
	if !strings.Contains(res.Reason, "were given "+snapshotFlags) {
		t.Errorf("reason %q: want it to say the servers were given %s", res.Reason, snapshotFlags)
	}
	if len(faults) < 1 {
		t.Fatalf("no long reads in 12 s: %+v", faults)
	}
	for _, f := range faults {
		if f.Fault != "long-reads" || f.Error != "" || f.Metrics["long_read_ms"] < 50 {
			t.Errorf("fault %+v: want long reads of 50 ms or more", f)
		}
	}
	o.assertCleanedUp(t)
}

// TestKillDuringSnapshot: a correct cluster, its servers given a low
// snapshot threshold by the scenario, has followers SIGKILLed as they log a
// persisted snapshot, and every one of them starts again with nothing
// acknowledged lost (rqlite 8.16.1, whose snapshot store listed the oldest
// snapshot, could not start a node so killed: docs/DETECTION.md).
func TestKillDuringSnapshot(t *testing.T) {
	var o opened
	res, _, faults := passFaultScenario(t, &o, "kill-during-snapshot", "", 12*time.Second)
	if !strings.Contains(res.Reason, "were given "+snapshotFlags) {
		t.Errorf("reason %q: want it to say the servers were given %s", res.Reason, snapshotFlags)
	}
	if res.Metrics["persist_kills"] < 1 {
		t.Fatalf("no follower killed on a persisted snapshot in 12 s: %v %+v", res.Metrics, faults)
	}
	for _, f := range faults {
		if f.Fault != "kill-during-snapshot" || f.Error != "" {
			t.Errorf("fault %+v: want kill-during-snapshot, healed", f)
		}
	}
	o.assertCleanedUp(t)
}

// TestLeaderPause: every call goes through a follower with rqlite's
// timeout=, the leader is paused within its lease again and again, and the
// follower's own counters are kept: on a server that never sends a
// forwarded write twice the run passes with writes given up on (they were
// sent and applied late: indeterminate, never failures); on df4edc42 and
// rqlite 8.17 the known issue rqlite-forwarded-write-resent strikes and
// the test is NOT RUN naming it.
func TestLeaderPause(t *testing.T) {
	var o opened
	res, dir, faults := passFaultScenario(t, &o, "leader-pause", "", 12*time.Second)
	if len(faults) < 5 {
		t.Errorf("%d pauses in 12 s, want at least 5: %+v", len(faults), faults)
	}
	for _, f := range faults {
		if f.Fault != "pause-leader" || f.Error != "" {
			t.Errorf("fault %+v", f)
		}
	}
	if res.Metrics["forwarded_writes"] < 100 {
		t.Errorf("metrics %v: want the follower to have forwarded the writes", res.Metrics)
	}
	b, err := os.ReadFile(filepath.Join(dir, forwardEvidence))
	if err != nil || !strings.Contains(string(b), "remote_executions") {
		t.Errorf("%s: %q (%v)", forwardEvidence, b, err)
	}
	o.assertCleanedUp(t)
}

// TestPacketLossOnCluster: a node's links that lose half their packets
// (mixed-faults' packet-loss fault alone, seed 1) slow the cluster without
// cutting it — the leader logs that it failed to contact a node in time —
// a correct cluster keeps every guarantee through it, and the rules go
// with the run.
func TestPacketLossOnCluster(t *testing.T) {
	needIsolation(t)
	sc := faultScenario("packet-loss", "a node's links lose packets",
		func(cluster.Cluster, *workload.Config) chaos.Schedule {
			return chaos.Schedule{Faults: []chaos.Fault{chaos.PacketLoss{Fraction: mixedLoss}}, Interval: 2 * time.Second, Duration: 3 * time.Second, Jitter: 0.3}
		})
	var o opened
	_, dir, faults := passScenario(t, &o, sc, "", 16*time.Second)
	if len(faults) < 2 {
		t.Fatalf("%d faults in 16 s, want at least 2: %+v", len(faults), faults)
	}
	for _, f := range faults {
		if f.Fault != "packet-loss" || f.Error != "" || !strings.Contains(f.Detail, fmt.Sprintf("%.0f%% of its packets", mixedLoss*100)) {
			t.Errorf("fault %+v", f)
		}
	}
	logs, err := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	if err != nil || len(logs) != 3 {
		t.Fatalf("node logs %v (%v), want three", logs, err)
	}
	late := 0
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		late += strings.Count(string(b), "failed to contact")
	}
	if late == 0 {
		t.Error("no node logged that it failed to contact another in time: the packets were not lost")
	}
	o.assertCleanedUp(t)
}

// TestFaultRunWithoutFaultsIsNotRun: a leader-kill run whose traffic ends
// before its first fault (one second; the schedule waits about three
// before the first kill) checked a cluster without faults: NOT RUN, saying
// why, never PASS.
func TestFaultRunWithoutFaultsIsNotRun(t *testing.T) {
	bin := needRqlited(t)
	sc, err := Lookup("leader-kill")
	if err != nil {
		t.Fatal(err)
	}
	var o opened
	target := o.target(t, "rqlite+process:?nodes=3&rqlited="+bin)
	res := runWatched(t, 2*time.Minute, func(ctx context.Context) Result {
		return sc.Run(ctx, target, Params{Seed: 1, OutDir: t.TempDir(), Clients: 4, Executions: 2, Duration: time.Second})
	})
	if res.Verdict != reports.NotRun || !strings.Contains(res.Reason, "no fault was injected") {
		t.Errorf("%s (%s) %v; want NOT RUN: no fault was injected", res.Verdict, res.Reason, res.Metrics)
	}
	if res.Ops == 0 {
		t.Error("no traffic ran: the run should have gone through and only then found no fault")
	}
	o.assertCleanedUp(t)
}

// passFaultScenario runs fault scenario name on a 3-node process cluster
// (the URL's query extended by query) for d, seed 1, logs its fault
// timeline, and fails the test unless it PASSes. It returns the result, the
// run folder and the faults.
func passFaultScenario(t *testing.T, o *opened, name, query string, d time.Duration) (Result, string, []evidence.Fault) {
	t.Helper()
	sc, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return passScenario(t, o, sc, query, d)
}

// passScenario is passFaultScenario for a scenario given by value.
func passScenario(t *testing.T, o *opened, sc Scenario, query string, d time.Duration) (Result, string, []evidence.Fault) {
	t.Helper()
	name := sc.Name
	bin := needRqlited(t)
	dir := keptOnFailure(t)
	target := o.target(t, "rqlite+process:?nodes=3"+query+"&rqlited="+bin)
	res := runWatched(t, 5*time.Minute, func(ctx context.Context) Result {
		return sc.Run(ctx, target, Params{Seed: 1, OutDir: dir, Clients: 6, Executions: 2, Duration: d})
	})
	t.Logf("%s %s %s %v", res.Verdict, res.Guarantee, res.Reason, res.Metrics)
	faults, err := evidence.ReadFaults(filepath.Join(dir, evidence.FaultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		t.Logf("fault at %.1f s: %s %s", float64(f.StartNS)/1e9, f.Detail, f.Error)
	}
	skipIfKnownIssue(t, res, dir, name)
	if res.Verdict != reports.Pass {
		t.Fatalf("verdict %s (%s), want PASS", res.Verdict, res.Reason)
	}
	return res, dir, faults
}
