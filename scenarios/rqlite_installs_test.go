package scenarios

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/internal/knownissues"
	"github.com/storecheck/storecheck/reports"
)

// nodeLog is a process node's log as the supervisor writes it: lives
// marked by their start and exit lines (lines as rqlited df4edc42 logs).
func nodeLog(lives ...[]string) string {
	var b strings.Builder
	for i, l := range lives {
		b.WriteString("=== storecheck: starting n2 at 2026-12-03T08:46:0" + string(rune('0'+i)) + "Z: /tmp/rqlited [-node-id n2]\n")
		for _, line := range l {
			b.WriteString(line + "\n")
		}
		b.WriteString("=== storecheck: n2 exited at 2026-12-03T08:46:0" + string(rune('0'+i)) + ".5Z: signal: killed\n")
	}
	return b.String()
}

const (
	lnInstalled = "[raft] 2026/12/03 08:46:07 [INFO]  copied to local snapshot: bytes=189292"
	lnRestoring = "[store] 2026/12/03 08:46:07 initiating node restore on node ID n2"
	lnSwapped   = "[store] 2026/12/03 08:46:07 successfully opened database at /dev/shm/x/n2/db.sqlite due to restore"
	lnFast      = "[store] 2026/12/03 08:46:08 detected successful prior snapshot operation, skipping restore"
	lnFull      = "[store] 2026/12/03 08:46:08 clean snapshot failed mod time and size check, full restore needed"
)

// TestUnrestoredInstalls: a life that ended after an install with no
// restore after it (the kill before or inside the restore), followed by a
// fast restart, is found (rqlite#2747, as df4edc42 logs it in
// kill-during-install); an install restored before the kill, or a restart
// that restores in full, is not.
func TestUnrestoredInstalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		lives [][]string
		want  int
	}{
		{"killed before the restore, fast restart", [][]string{{lnFast}, {lnInstalled}, {lnFast}}, 1},
		{"killed inside the restore, fast restart", [][]string{{}, {lnInstalled, lnRestoring}, {lnFast}}, 1},
		{"twice", [][]string{{}, {lnInstalled}, {lnFast, lnInstalled, lnRestoring}, {lnFast}}, 2},
		{"restored before the kill", [][]string{{}, {lnInstalled, lnRestoring, lnSwapped}, {lnFast}}, 0},
		{"full restore after the kill", [][]string{{}, {lnInstalled}, {lnFull}, {lnFast}}, 0},
		{"no install", [][]string{{lnFast}, {lnFast}}, 0},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "n2.log"), []byte(nodeLog(c.lives...)), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _, _ := unrestoredInstalls(dir)
		if len(got) != c.want {
			t.Errorf("%s: found %d, want %d: %q", c.name, len(got), c.want, got)
		}
		for _, g := range got {
			if !strings.HasPrefix(g, "n2: life ") || !strings.Contains(g, cluster.UnrestoredInstall) || !strings.Contains(g, "copied to local snapshot") {
				t.Errorf("%s: line %q", c.name, g)
			}
		}
	}
}

// runWithN2Log is the Params of a run whose server logs hold n2's log.
func runWithN2Log(t *testing.T, log string) Params {
	t.Helper()
	p := Params{OutDir: t.TempDir()}
	if err := os.MkdirAll(folder(p).LogDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder(p).LogDir(), "n2.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// n2Short is what the checks after the heal read when n2 lost rows: n1 and
// n3 hold e0 at its acknowledged version, n2 at an older one.
func n2Short() afterHeal {
	return afterHeal{nodes: []nodeTables{tablesAt("n1", 20), tablesAt("n2", 7), tablesAt("n3", 20)}, acked: map[string]int64{"e0": 20}}
}

// TestKeepUnrestored: the restarts are counted, kept in the run's folder
// and named in a FAIL's reason, and the FAIL is then the known issue.
func TestKeepUnrestored(t *testing.T) {
	p := runWithN2Log(t, nodeLog([]string{}, []string{lnInstalled}, []string{lnFast}))
	out := p.OutDir
	res := Result{Verdict: reports.Fail, Guarantee: GuaranteeConvergence, Reason: "convergence: node n2 differs", Metrics: map[string]float64{}}
	keepUnrestored(p, &res, n2Short())
	if res.Metrics["unrestored_installs"] != 1 || !strings.Contains(res.Reason, "rqlite#2747") {
		t.Fatalf("metrics %v, reason %q", res.Metrics, res.Reason)
	}
	if is := knownissues.Match("rqlite+process", "kill-during-install", GuaranteeConvergence, out); is == nil || is.ID != "rqlite-fast-restart-unrestored-snapshot" {
		t.Errorf("known issue %v", is)
	}
	if is := knownissues.Match("rqlite+process", "kill-during-install", "log matching", out); is != nil {
		t.Errorf("log matching explained by %s", is.ID)
	}

	// Nothing found: nothing kept, the reason unchanged.
	clean := Params{OutDir: t.TempDir()}
	pass := Result{Verdict: reports.Pass, Metrics: map[string]float64{}}
	keepUnrestored(clean, &pass, afterHeal{})
	if _, err := os.Stat(filepath.Join(clean.OutDir, unrestoredEvidence)); err == nil || pass.Metrics["unrestored_installs"] != 0 || pass.Reason != "" {
		t.Errorf("a run without such a restart: %v %q (%v)", pass.Metrics, pass.Reason, err)
	}
}

// TestUnrestoredInstallRepairedLater: a node that restarted on the fast
// path over an unrestored install and later restored a snapshot in full
// (the leader sent it a fresh one: docs/DETECTION.md saw this repair the
// node 3–5 s later in every run before the fault held the traffic) holds
// every row again. Its restart is not evidence of rqlite#2747 for the
// run's verdict: a FAIL of such a run has another cause, and must not be
// reported (and, with --accept-known, accepted) as that known issue.
func TestUnrestoredInstallRepairedLater(t *testing.T) {
	for _, c := range []struct {
		name  string
		lives [][]string
		want  int
	}{
		{"repaired in the same life", [][]string{{}, {lnInstalled}, {lnFast, lnInstalled, lnRestoring, lnSwapped}}, 0},
		{"repaired in a later life", [][]string{{}, {lnInstalled}, {lnFast}, {lnFull, lnSwapped}}, 0},
		{"repaired, then lost again", [][]string{{}, {lnInstalled}, {lnFast, lnInstalled, lnRestoring, lnSwapped, lnInstalled}, {lnFast}}, 1},
		{"a restore begun but not finished does not repair", [][]string{{}, {lnInstalled}, {lnFast, lnInstalled, lnRestoring}}, 1},
	} {
		p := runWithN2Log(t, nodeLog(c.lives...))
		out := p.OutDir
		res := Result{Verdict: reports.Fail, Guarantee: "linearizability", Reason: "linearizability: a stale read", Metrics: map[string]float64{}}
		keepUnrestored(p, &res, n2Short())
		if got := int(res.Metrics["unrestored_installs"]); got != c.want {
			t.Errorf("%s: unrestored_installs %d, want %d", c.name, got, c.want)
		}
		is := knownissues.Match("rqlite+process", "mixed-faults", "linearizability", out)
		if (is != nil) != (c.want > 0) {
			t.Errorf("%s: the FAIL is explained by %v; want explained: %v", c.name, is, c.want > 0)
		}
	}
}

// TestUnrestoredInstallUnseenAfterHeal: a node that restarted over an
// unrestored install but, after the heal, holds every acknowledged version
// and the same tables as the nodes that never did, lost nothing the run
// can see: a FAIL of that run (a stale read, say) has another cause and is
// not the known issue; the restart is still kept and counted as unseen.
// Without the nodes' tables nothing shows either.
func TestUnrestoredInstallUnseenAfterHeal(t *testing.T) {
	whole := afterHeal{nodes: []nodeTables{tablesAt("n1", 20), tablesAt("n2", 20), tablesAt("n3", 20)}, acked: map[string]int64{"e0": 20}}
	// Every version acknowledged, but unlike the others: shown.
	unlike := afterHeal{nodes: []nodeTables{tablesAt("n1", 20), tablesAt("n2", 21), tablesAt("n3", 20)}, acked: map[string]int64{"e0": 20}}
	for _, c := range []struct {
		name      string
		after     afterHeal
		explained bool
	}{{"short", n2Short(), true}, {"unlike the others", unlike, true}, {"whole", whole, false}, {"not read", afterHeal{}, false}} {
		p := runWithN2Log(t, nodeLog([]string{}, []string{lnInstalled}, []string{lnFast}))
		out := p.OutDir
		res := Result{Verdict: reports.Fail, Guarantee: "stale read", Reason: "stale read: …", Metrics: map[string]float64{}}
		keepUnrestored(p, &res, c.after)
		is := knownissues.Match("rqlite+process", "mixed-faults", "stale read", out)
		if (is != nil) != c.explained || strings.Contains(res.Reason, "rqlite#2747") != c.explained {
			t.Errorf("%s: explained by %v, reason %q; want explained %v", c.name, is, res.Reason, c.explained)
		}
		if res.Metrics["unrestored_installs"] != 1 || (res.Metrics["unrestored_installs_unseen"] == 1) == c.explained {
			t.Errorf("%s: metrics %v", c.name, res.Metrics)
		}
		if kept, err := os.ReadFile(filepath.Join(out, unrestoredEvidence)); err != nil || !strings.Contains(string(kept), "n2: life ") {
			t.Errorf("%s: evidence %q (%v)", c.name, kept, err)
		}
	}
}

// TestDamageShownWhenEveryNodeRestartedOverAnInstall: the fault moves
// from node to node, so in a run every node may have restarted over an
// unrestored install (TestKillDuringInstall, 2026-12-03: three kills, three
// such restarts, n2's outbox unlike n1's after the heal, every
// acknowledged version held). With no sound node to compare with, the
// damaged nodes are compared with one another: those that differ show the
// damage, nodes that all agree show none, and a sound node, when there is
// one, is still what decides.
func TestDamageShownWhenEveryNodeRestartedOverAnInstall(t *testing.T) {
	all := map[string]bool{"n1": true, "n2": true, "n3": true}
	acked := map[string]int64{"e0": 20}
	differ := afterHeal{nodes: []nodeTables{tablesAt("n1", 20), tablesAt("n2", 21), tablesAt("n3", 20)}, acked: acked}
	for _, n := range []string{"n1", "n2", "n3"} {
		if !differ.showsDamage(n, all) {
			t.Errorf("%s: every node damaged, n2 unlike the others: %s shows nothing", n, n)
		}
	}
	agree := afterHeal{nodes: []nodeTables{tablesAt("n1", 20), tablesAt("n2", 20), tablesAt("n3", 20)}, acked: acked}
	for _, n := range []string{"n1", "n2", "n3"} {
		if agree.showsDamage(n, all) {
			t.Errorf("%s: every node damaged, all alike: %s shows damage", n, n)
		}
	}
	// n3 sound and alike n1: n1 shows nothing though it differs from n2
	// (damaged), and n2 shows the damage.
	two := map[string]bool{"n1": true, "n2": true}
	if differ.showsDamage("n1", two) || !differ.showsDamage("n2", two) {
		t.Errorf("with a sound n3: n1 shown %v (want false), n2 shown %v (want true)", differ.showsDamage("n1", two), differ.showsDamage("n2", two))
	}
}

// savedNodes is a cluster whose node copies are files saying what was
// asked: the node, and what to leave out.
type savedNodes struct{ fail string }

func (c savedNodes) SaveNode(_ context.Context, id, dst string, leaveOut ...string) error {
	if id == c.fail {
		return errors.New("node gone")
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "asked"), []byte(id+" without "+strings.Join(leaveOut, ",")), 0o644)
}

// TestKeepInstallCopies: each kill on an install line keeps a copy of the
// killed node's data folder, its Raft log left out (the copying itself:
// cluster's TestSaveNode), numbered in the order of the kills, and says
// when in installs/index.txt, and which copy failed.
func TestKeepInstallCopies(t *testing.T) {
	out := t.TempDir()
	if keepInstallCopies("", savedNodes{}) != nil || keepInstallCopies(out, struct{}{}) != nil {
		t.Fatal("a hook without a run folder, or on a cluster that cannot copy a node")
	}
	killed := keepInstallCopies(out, savedNodes{fail: "n3"})
	killed(context.Background(), "n2")
	killed(context.Background(), "n1")
	killed(context.Background(), "n3")
	for _, c := range []struct{ name, want string }{
		{"1-n2/asked", "n2 without raft.db"},
		{"2-n1/asked", "n1 without raft.db"},
	} {
		got, err := os.ReadFile(filepath.Join(out, installsEvidence, c.name))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	index, err := os.ReadFile(filepath.Join(out, installsEvidence, installsIndex))
	lines := strings.Split(strings.TrimSpace(string(index)), "\n")
	if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[0], "1-n2: n2 SIGKILLed on its install line at ") ||
		!strings.HasPrefix(lines[1], "2-n1: ") || strings.Contains(lines[1], "incomplete") ||
		!strings.HasPrefix(lines[2], "3-n3: ") || !strings.Contains(lines[2], "(incomplete: node gone)") {
		t.Errorf("index: %v\n%s", err, index)
	}
}

// Lines of a TestKillDuringInstall run on rqlited df4edc42 (2026-12-03,
// the node that could not start again; docs/KNOWN-ISSUES.md,
// rqlite-unrestored-snapshot-reap-malformed).
const (
	lnReapFailed = "[snapshot-store] 2026/12/03 21:19:44 reap failed: executing reap plan: checkpointing WAL: disable autocheckpointing: database disk image is malformed"
	lnPlanFound  = "[snapshot-store] 2026/12/03 21:19:50 re-executing interrupted reap plan at /dev/shm/storecheck-rqlite-8307-2588846599/n1/wsnapshots/REAP_PLAN"
	lnOpenFailed = "[rqlited] 2026/12/03 21:19:50 failed to open store: failed to create snapshot store: executing reap plan: executing reap plan: checkpointing WAL: disable autocheckpointing: database disk image is malformed"
)

// TestMalformedReaps: a reap SQLite found malformed after a fast restart
// over an unrestored install is kept (snapshot-store-reaps.txt); a node
// life refused at start for it carries the signature of
// rqlite-unrestored-snapshot-reap-malformed, which then explains the run's
// recovery FAIL, and nothing else. The same refusal without such a restart
// before it (a store broken some other way), or a reap that failed while
// the node ran but no start refused, is not the known issue.
func TestMalformedReaps(t *testing.T) {
	const id = "rqlite-unrestored-snapshot-reap-malformed"
	recovery := func() Result {
		return Result{Verdict: reports.Fail, Guarantee: GuaranteeRecovery, Reason: "recovery: after the heal: wait for every node to apply the log: context deadline exceeded", Metrics: map[string]float64{}}
	}
	// The run seen: life 2 killed on its install line, life 3 on the fast
	// path and its reap refused, life 4 refused at start.
	seen := nodeLog([]string{}, []string{lnFast, lnInstalled}, []string{lnFast, lnReapFailed}, []string{lnPlanFound, lnOpenFailed})
	p := runWithN2Log(t, seen)
	res := recovery()
	keepUnrestored(p, &res, afterHeal{})
	text, err := os.ReadFile(filepath.Join(p.OutDir, reapsEvidence))
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	if err != nil || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "n2: life 3 could not reap its snapshot store (life 3 took the fast path over a snapshot installed in life 2 and never restored)") ||
		!strings.HasPrefix(lines[1], "n2: life 4 "+cluster.MalformedSnapshotStore+" (life 3 took the fast path") || !strings.Contains(lines[1], "failed to open store") {
		t.Fatalf("%s: %v\n%s", reapsEvidence, err, text)
	}
	if res.Metrics["malformed_reaps"] != 1 || res.Metrics["unopenable_snapshot_stores"] != 1 || !strings.Contains(res.Reason, "1 node start(s) refused") {
		t.Errorf("metrics %v, reason %q", res.Metrics, res.Reason)
	}
	if is := knownissues.Match("rqlite+process", "kill-during-install", GuaranteeRecovery, p.OutDir); is == nil || is.ID != id {
		t.Errorf("the recovery FAIL: known issue %v", is)
	}
	for _, g := range []string{GuaranteeDurability, "lost update", "linearizability"} {
		if is := knownissues.Match("rqlite+process", "kill-during-install", g, p.OutDir); is != nil {
			t.Errorf("%s explained by %s (n2 showed no damage after the heal)", g, is.ID)
		}
	}

	for _, c := range []struct{ name, log string }{
		{"refused at start, no fast restart over an unrestored install before", nodeLog([]string{}, []string{lnInstalled, lnRestoring, lnSwapped}, []string{lnFast, lnReapFailed}, []string{lnPlanFound, lnOpenFailed})},
		{"a reap refused while the node ran, every start served", nodeLog([]string{}, []string{lnInstalled}, []string{lnFast, lnReapFailed, lnReapFailed})},
	} {
		p := runWithN2Log(t, c.log)
		res := recovery()
		keepUnrestored(p, &res, afterHeal{})
		if is := knownissues.Match("rqlite+process", "kill-during-install", GuaranteeRecovery, p.OutDir); is != nil {
			t.Errorf("%s: recovery explained by %s", c.name, is.ID)
		}
		if res.Metrics["unopenable_snapshot_stores"] != 0 || strings.Contains(res.Reason, "refused") {
			t.Errorf("%s: metrics %v, reason %q", c.name, res.Metrics, res.Reason)
		}
	}
}
