package managed

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/raftlog"
	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
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

// TestConformanceProcess runs the conformance suite on a real 3-node
// cluster: one cluster for the whole suite, reset between test cases.
func TestConformanceProcess(t *testing.T) {
	bin := needRqlited(t)
	opens := 0
	conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
		opens++
		if opens > 1 {
			t.Errorf("the harness opened a second cluster; it should reset the first")
		}
		// The default guard (prestate); the seed's data guard lets a
		// byte-identical stale commit leak (see rqlite.GuardData), which
		// the state machine draws on purpose.
		return Open(ctx, Options{Kind: Process, Nodes: 3, Rqlited: bin}, cfg)
	})
}

// TestProcessCleanup: after Close, whatever the cluster's state — a node
// isolated by iptables, one paused by SIGSTOP — no rqlited process, data
// folder or iptables chain of the run remains.
func TestProcessCleanup(t *testing.T) {
	bin := needRqlited(t)
	ctx := context.Background()
	s, err := Open(ctx, Options{Kind: Process, Nodes: 3, Rqlited: bin}, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := s.Cluster().(*cluster.Processes)
	pids, dir, chain := p.PIDs(), p.Dir(), p.Chain()
	if len(pids) != 3 {
		t.Fatalf("%d processes running, want 3", len(pids))
	}
	if p.IsolationAvailable() == nil {
		if err := p.Isolate(ctx, "n3"); err != nil {
			t.Fatal(err)
		}
		if chains, _ := cluster.LeftoverChains(ctx); !contains(chains, chain) {
			t.Fatalf("isolation did not create chain %s: %v", chain, chains)
		}
	}
	if err := p.Pause(ctx, "n2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids, dir)
	if chains, err := cluster.LeftoverChains(ctx); err != nil || contains(chains, chain) {
		t.Errorf("iptables chain %s left behind (%v, %v)", chain, chains, err)
	}
}

// openThreeProcesses opens a store on a cluster of three rqlited
// processes, closed when the test ends, or reports the test NOT RUN.
func openThreeProcesses(t *testing.T) *Store {
	t.Helper()
	bin := needRqlited(t)
	s, err := Open(context.Background(), Options{Kind: Process, Nodes: 3, Rqlited: bin}, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSaveDataKeepsEachNodesFiles: the evidence of diverged nodes is each
// node's data folder, copied after the nodes are halted (killed); the copy
// holds the node's Raft log and SQLite file, no node runs after Halt, the
// kept logs agree — and stop agreeing when one node's copy of a commit is
// rewritten, or when one node's log opens a term with a command — and
// Close still removes the cluster.
func TestSaveDataKeepsEachNodesFiles(t *testing.T) {
	ctx := context.Background()
	s := openThreeProcesses(t)
	if err := s.Commit(ctx, &model.Execution{ID: "e0", DefinitionID: "d", Status: "running"}, model.Batch{}); err != nil {
		t.Fatal(err)
	}
	p := s.Cluster().(*cluster.Processes)
	pids, dir := p.PIDs(), p.Dir()
	out := t.TempDir()
	if err := p.Halt(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Halt(ctx); err != nil { // nothing left to kill
		t.Errorf("a second Halt: %v", err)
	}
	if err := p.SaveData(ctx, out); err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes() {
		for _, name := range []string{"raft.db", "db.sqlite"} {
			if fi, err := os.Stat(filepath.Join(out, n.ID, name)); err != nil || fi.Size() == 0 {
				t.Errorf("node %s: %s not kept (%v)", n.ID, name, err)
			}
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("rqlited %d still runs after Halt (%v)", pid, err)
		}
	}
	// The kept Raft logs read back, and a healthy cluster's agree.
	var ids []string
	for _, n := range p.Nodes() {
		ids = append(ids, n.ID)
	}
	c := raftlog.Report(out, ids)
	if c.Breaks() || len(c.Unread) > 0 || c.Shared < 4 || !strings.Contains(c.Text, "holds the same entry in each") {
		t.Errorf("the kept Raft logs (%d indexes compared):\n%s", c.Shared, c.Text)
	}
	// A deliberately broken log: n3's copy of the commit above rewritten
	// in place, same index and term, other statements (the shape
	// hashicorp/raft#695 leaves). The comparison must name that index.
	n3 := filepath.Join(out, "n3", "raft.db")
	entries, err := raftlog.Read(n3)
	if err != nil {
		t.Fatal(err)
	}
	var last *raftlog.Entry
	for i := range entries {
		if entries[i].Type == 0 && strings.Contains(string(entries[i].Data), "INSERT") {
			last = &entries[i]
		}
	}
	if last == nil {
		t.Fatalf("no commit in n3's log of %d entries", len(entries))
	}
	forged := *last
	forged.Data = []byte(strings.Replace(string(last.Data), "INSERT", "REPLACE", 1))
	if err := raftlog.Write(n3, []raftlog.Entry{forged}); err != nil {
		t.Fatal(err)
	}
	c = raftlog.Report(out, ids)
	if len(c.Broken) != 1 || c.Broken[0].Index != last.Index || !strings.Contains(c.Text, raftlog.BrokenMatching) {
		t.Errorf("n3's entry %d rewritten, the comparison found %+v:\n%s", last.Index, c.Broken, c.Text)
	}
	// And n2's copy of the leader's no-op that opened its term rewritten
	// as a command of that term: the log opens the term with something its
	// leader did not write first (raftlog.FindUnled).
	n2 := filepath.Join(out, "n2", "raft.db")
	if entries, err = raftlog.Read(n2); err != nil {
		t.Fatal(err)
	}
	var noop *raftlog.Entry
	for i := 1; i < len(entries) && noop == nil; i++ {
		if entries[i].Type == 1 && entries[i].Term > entries[i-1].Term && entries[i].Index == entries[i-1].Index+1 {
			noop = &entries[i]
		}
	}
	if noop == nil {
		t.Fatalf("no term opened by a no-op in n2's log of %d entries", len(entries))
	}
	queued := *noop
	queued.Type, queued.Data = 0, last.Data
	if err := raftlog.Write(n2, []raftlog.Entry{queued}); err != nil {
		t.Fatal(err)
	}
	c = raftlog.Report(out, ids)
	if len(c.Unled) != 1 || c.Unled[0].Node != "n2" || c.Unled[0].Index != noop.Index {
		t.Errorf("n2's no-op at %d rewritten as a command, the comparison found %+v:\n%s", noop.Index, c.Unled, c.Text)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids, dir)
}

// TestProcessCleanupOnCancel: a context cancelled while the cluster starts
// (Ctrl-C) leaves nothing behind either.
func TestProcessCleanupOnCancel(t *testing.T) {
	bin := needRqlited(t)
	before, _ := os.ReadDir(os.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := cluster.StartProcesses(ctx, bin, cluster.Config{Nodes: 3})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Skipf("the cluster started within 300ms (%v); nothing to interrupt", err)
	}
	after, _ := os.ReadDir(os.TempDir())
	if n := countPrefix(after, "storecheck-rqlite-") - countPrefix(before, "storecheck-rqlite-"); n > 0 {
		t.Errorf("%d cluster folders left in %s", n, os.TempDir())
	}
}

func countPrefix(entries []os.DirEntry, prefix string) int {
	n := 0
	for _, e := range entries {
		if len(e.Name()) >= len(prefix) && e.Name()[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// assertGone checks that no pid is alive and dir is gone.
func assertGone(t *testing.T, pids []int, dir string) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists (%v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster folder %s left behind (%v)", dir, err)
	}
}

// TestParse covers the URL forms.
func TestParse(t *testing.T) {
	o, err := Parse(Process, "?nodes=5&level=none&rqlited=/x/rqlited")
	if err != nil || o.Nodes != 5 || o.Level != rqlite.LevelNone || o.Rqlited != "/x/rqlited" {
		t.Fatalf("%+v %v", o, err)
	}
	if o, err := Parse(Process, ""); err != nil || o.Nodes != 3 || o.Level != rqlite.LevelStrong {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	if o, err := Parse(Container, "?image=build"); err != nil || o.Image != cluster.BuildImage {
		t.Fatalf("image: %+v %v", o, err)
	}
	if o, err := Parse(Process, "?flags=-raft-snap=10,-raft-snap-int=1s"); err != nil || strings.Join(o.Flags, " ") != "-raft-snap=10 -raft-snap-int=1s" {
		t.Fatalf("flags: %+v %v", o, err)
	}
	for _, data := range []string{DataMemory, DataDisk} {
		if o, err := Parse(Process, "?data="+data); err != nil || o.Data != data {
			t.Fatalf("data=%s: %+v %v", data, o, err)
		}
	}
	if _, err := Parse(Container, "?data=disk"); err == nil {
		t.Errorf("a container cluster took data=, which only processes have")
	}
	for _, bad := range []string{"nodes=3", "?nodes=0", "?nodes=10", "?level=x", "?image=i", "?x=1", "?data=ram", "?data=",
		"?flags=-join=x:1", "?flags=-http-addr=1", "?flags=raft-snap=1", "?flags=-raft-snap", "?flags=-raft-snap=1,/data"} {
		if _, err := Parse(Process, bad); err == nil {
			t.Errorf("Parse(process, %q) accepted", bad)
		}
	}
}

// TestServerFlagsReachRqlited: flags from the URL reach every rqlited (its
// /status reports the snapshot threshold asked for), and the store says
// which build and flags it runs on.
func TestServerFlagsReachRqlited(t *testing.T) {
	bin := needRqlited(t)
	ctx := context.Background()
	s, err := Open(ctx, Options{Kind: Process, Nodes: 3, Rqlited: bin, Flags: []string{"-raft-snap=7"}}, model.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range s.Cluster().Nodes() {
		body, err := http.Get("http://" + n.HTTPAddr + "/status")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Store struct {
				Threshold json.Number `json:"snapshot_threshold"`
			} `json:"store"`
		}
		err = json.NewDecoder(body.Body).Decode(&st)
		body.Body.Close()
		if err != nil || st.Store.Threshold != "7" {
			t.Errorf("%s: snapshot threshold %q (%v), want 7", n.ID, st.Store.Threshold, err)
		}
	}
	if srv := strings.Join(s.Servers(), "; "); !strings.HasPrefix(srv, "rqlited ") || !strings.Contains(srv, "3 process nodes, flags -raft-snap=7") {
		t.Errorf("servers %q", srv)
	}
}

// TestEveryFaultOnProcesses injects every fault of package chaos into a
// live cluster, heals it, and checks that the cluster serves again with a
// leader, and that the faults that move leadership measured it.
func TestEveryFaultOnProcesses(t *testing.T) {
	ctx := context.Background()
	s := openThreeProcesses(t)
	ctl := cluster.Control{Cluster: s.Cluster()}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range append(chaos.All(), chaos.Restart{Node: "n2"}) {
		t.Run(f.Name(), func(t *testing.T) {
			if err := f.Available(ctl); err != nil {
				t.Skipf("NOT RUN: %v", err)
			}
			inj, err := f.Inject(ctx, ctl, rng)
			if err != nil {
				t.Errorf("inject: %v", err)
			}
			t.Logf("%s %s: %s %v", f.Name(), inj.Target, inj.Detail, inj.Metrics)
			if inj.Heal != nil {
				if err := inj.Heal(ctx); err != nil {
					t.Fatalf("heal: %v", err)
				}
			}
			if err := ctl.WaitHealthy(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			switch f {
			case chaos.KillLeader, chaos.IsolateLeader, chaos.StepDown:
				if inj.Metrics["new_leader_ms"] <= 0 {
					t.Errorf("no time to a new leader measured: %v", inj.Metrics)
				}
			}
			// The store still works after the fault.
			exe := &model.Execution{ID: "after-" + f.Name(), DefinitionID: "d"}
			if err := s.Save(ctx, exe); err != nil {
				t.Errorf("save after %s: %v", f.Name(), err)
			}
		})
	}
}

// TestDataInMemoryOrOnDisk: data=memory puts the nodes' data on the tmpfs,
// data=disk in the system's temporary folder, and the store says which;
// the cluster works either way and its folder is gone after Close.
func TestDataInMemoryOrOnDisk(t *testing.T) {
	bin := needRqlited(t)
	mem, err := tmpfs.Folder()
	if err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	ctx := context.Background()
	for _, c := range []struct{ data, in, says string }{
		{DataMemory, mem, "data in memory (" + mem},
		{DataDisk, os.TempDir(), "data on disk"},
	} {
		s, err := Open(ctx, Options{Kind: Process, Nodes: 1, Rqlited: bin, Data: c.data}, model.DefaultConfig())
		if err != nil {
			t.Fatalf("data=%s: %v", c.data, err)
		}
		p := s.Cluster().(*cluster.Processes)
		dir := p.Dir()
		if filepath.Dir(dir) != filepath.Clean(c.in) {
			t.Errorf("data=%s: cluster folder %s, want one in %s", c.data, dir, c.in)
		}
		if srv := strings.Join(s.Servers(), "; "); !strings.Contains(srv, c.says) {
			t.Errorf("data=%s: servers %q do not say %q", c.data, srv, c.says)
		}
		if err := s.Save(ctx, &model.Execution{ID: "e1", DefinitionID: "d", Status: "running"}); err != nil {
			t.Errorf("data=%s: save: %v", c.data, err)
		}
		pids := p.PIDs()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		assertGone(t, pids, dir)
	}
}
