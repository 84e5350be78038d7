package knownissues

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/raftlog"
)

func TestMatch(t *testing.T) {
	dir := t.TempDir()
	sig := All()[0].Signature
	if err := os.MkdirAll(filepath.Join(dir, "faults"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "faults", "history.jsonl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"kind":"commit","output":{"outcome":"indeterminate","error":"COMMIT: ` + sig + `"}}` + "\n")
	if is := Match("libsql+replica", "replica-lag-conflict", "atomicity", dir); is == nil || is.ID != "libsql-delegated-txn-autocommit" {
		t.Errorf("the signature in a level's history: %v", is)
	}
	if is := Match("sqlite", "replica-lag-conflict", "atomicity", dir); is != nil {
		t.Errorf("another backend matched %s", is.ID)
	}
	if is := Match("libsql+replica", "replica-lag-conflict", "lost update", dir); is != nil {
		t.Errorf("a guarantee the bug cannot break matched %s", is.ID)
	}
	write(`{"kind":"commit","output":{"outcome":"ok"}}` + "\n")
	if is := Match("libsql+replica", "replica-lag-conflict", "atomicity", dir); is != nil {
		t.Errorf("a FAIL without the signature matched %s", is.ID)
	}
	if Lookup("libsql-delegated-txn-autocommit") == nil || Lookup("nope") != nil {
		t.Errorf("Lookup")
	}
}

// TestMatchSpinEvidence: the sqld spin is matched by the thread dump the
// spin watch wrote (two threads in the hand-off), never by the text in a
// history, nor by one thread alone.
func TestMatchSpinEvidence(t *testing.T) {
	is := Lookup("sqld-write-lock-spin")
	if is == nil {
		t.Fatal("no sqld-write-lock-spin in the catalogue")
	}
	frame := "#3 0x55 in libsql_server::connection::connection_manager::" + is.Signature + "::acquire ()\n"
	for _, c := range []struct {
		name, file, text string
		want             bool
	}{
		{"two threads in the hand-off", "logs/sqld-lag_200ms" + is.EvidenceSuffix, "Thread 3\n" + frame + "Thread 4\n" + frame, true},
		{"one thread", "logs/sqld-lag_200ms" + is.EvidenceSuffix, "Thread 3\n" + frame, false},
		{"samples without a dump", "logs/sqld-lag_200ms" + is.EvidenceSuffix, "no thread dump: gdb is not on PATH\n", false},
		{"the text in a history", "lag_200ms/history.jsonl", frame + frame, false},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, c.file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got := Match("libsql+replica", "replica-lag-conflict", "replica convergence", dir)
		if (got != nil && got.ID == is.ID) != c.want {
			t.Errorf("%s: matched %v, want %v", c.name, got, c.want)
		}
		if got := Match("libsql+replica", "replica-lag-conflict", "phantom write", dir); got != nil && got.ID == is.ID {
			t.Errorf("%s: a guarantee a stall cannot break matched", c.name)
		}
	}
}

// TestMatchDivergedRaftLogs: the heartbeat-term race is recognised by the
// comparison of the nodes' Raft logs a divergence keeps (nodes/raftlog.txt)
// when two nodes hold different entries of one term at an index, for the
// guarantees a diverged node breaks; logs that agree, different terms (an
// uncommitted tail), a stale read and another backend are not explained.
func TestMatchDivergedRaftLogs(t *testing.T) {
	is := Lookup("raft-heartbeat-term-race")
	if is == nil {
		t.Fatal("no raft-heartbeat-term-race in the catalogue")
	}
	head := "Raft logs read from each node's raft.db after the nodes were killed\nn1: 10241 entries, indexes 4933..15173\n"
	broken := head + "index 9293: " + raftlog.BrokenMatching + ": the same term, different entries: n1 term 5 no-op; n3 term 5 command 92ca71a9fd9f \"SELECT\"\n"
	for _, c := range []struct {
		name, text, scheme, guarantee string
		want                          bool
	}{
		{"same index and term, different entries", broken, "rqlite+process", "log matching", true},
		{"the same, as nodes that differ", broken, "rqlite+process", "convergence", true},
		{"the same, as a node short of a write", broken, "rqlite+process", "durability", true},
		{"the same, read through as a lost update", broken, "rqlite+process", "lost update", true},
		{"a stale read with the logs diverged", broken, "rqlite+process", "linearizability", false},
		{"logs that agree", head + "every index that more than one of these logs holds holds the same entry in each\n", "rqlite+process", "convergence", false},
		{"different terms", head + "index 9293: different entries, of different terms: n1 term 5 no-op; n3 term 4 no-op\n", "rqlite+process", "convergence", false},
		{"another backend", broken, "libsql+replica", "convergence", false},
	} {
		dir := filepath.Join(t.TempDir(), "nodes")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, is.EvidenceSuffix), []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got := Match(c.scheme, "leader-stall", c.guarantee, filepath.Dir(dir))
		if (got != nil && got.ID == is.ID) != c.want {
			t.Errorf("%s: matched %v, want %v", c.name, got, c.want)
		}
		// Struck asks only for the evidence: a stale read with the logs
		// diverged is struck, though not explained.
		struck := Struck(c.scheme, "leader-stall", filepath.Dir(dir))
		wantStruck := c.scheme == is.Scheme && strings.Contains(c.text, raftlog.BrokenMatching)
		if (struck != nil && struck.ID == is.ID) != wantStruck {
			t.Errorf("%s: struck %v, want %v", c.name, struck, wantStruck)
		}
	}
}

// TestMatchUnrestoredInstall: rqlite#2747 is recognised by the restarts
// the fault run found in the nodes' logs (unrestored-installs.txt), for
// what a node missing committed rows breaks, never for Log Matching (its
// Raft log is whole), and not without that file.
func TestMatchUnrestoredInstall(t *testing.T) {
	is := Lookup("rqlite-fast-restart-unrestored-snapshot")
	if is == nil {
		t.Fatal("no rqlite-fast-restart-unrestored-snapshot in the catalogue")
	}
	dir := t.TempDir()
	line := "n2: life 3 " + cluster.UnrestoredInstall + " (\"… skipping restore\"): life 2 ended (signal: killed) after \"… copied to local snapshot: bytes=1\" with no restore after it\n"
	if got := Match("rqlite+process", "kill-during-install", "convergence", dir); got != nil {
		t.Fatalf("matched %s without evidence", got.ID)
	}
	if err := os.WriteFile(filepath.Join(dir, is.EvidenceSuffix), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"convergence", "durability", "lost update", "linearizability"} {
		if got := Match("rqlite+process", "kill-during-install", g, dir); got == nil || got.ID != is.ID {
			t.Errorf("%s: matched %v", g, got)
		}
	}
	if got := Match("rqlite+process", "kill-during-install", "log matching", dir); got != nil {
		t.Errorf("log matching explained by %s", got.ID)
	}
	if got := Match("libsql+replica", "kill-during-install", "convergence", dir); got != nil {
		t.Errorf("another backend matched %s", got.ID)
	}
}

// TestMatchWritesAppliedTwice: a follower's re-sent writes explain a FAIL
// only when every violation is of the shape a write applied twice makes
// (the lines below are those of a leader-pause run on df4edc42, in its
// order): a commit that returned a conflict though it won, and the
// register and trace-ring lines of the same executions. A stale read of
// another execution, or another guarantee, in the same run is not
// explained; nor is a run whose violations were not written down, nor one
// whose follower re-sent nothing. The lines are literals: that the checks
// still write them so is TestAppliedTwiceByTheRealChecks' to show.
func TestMatchWritesAppliedTwice(t *testing.T) {
	is := Lookup("rqlite-forwarded-write-resent")
	if is == nil {
		t.Fatal("no rqlite-forwarded-write-resent in the catalogue")
	}
	resent := "node n3 took every call\n" + cluster.ResentSignature + "24: each may be applied twice\n"
	seen := "verdict: FAIL (porcupine: Illegal)\n" +
		"atomicity: commit c4-336 (e1 v200→201) returned a conflict but its write is v201 of the chain\n" +
		"atomicity: save c7-516 (E0 v314→315) returned a conflict but its write is v315 of the chain\n" +
		"linearizability: execution e1: no linearization of its register operations exists (a stale read, a lost update or a wrong conflict)\n" +
		"linearizability: execution E0: no linearization of its register operations exists (a stale read, a lost update or a wrong conflict)\n" +
		"trace ring: execution E0: no linearization of its trace appends and reads exists\n" +
		"note: 10 indeterminate operations settled by witnesses: 5 had no effect, 5 took effect, 0 unseen appends counted\n"
	for _, c := range []struct {
		name, violations, forwarding, guarantee string
		want                                    bool
	}{
		{"writes applied twice", seen, resent, "atomicity", true},
		{"the same, named by the register check", seen, resent, "linearizability", true},
		{"no re-sent write", seen, "node n3 took every call\n", "atomicity", false},
		{"violations not written down", "", resent, "atomicity", false},
		{"and a stale read of another execution", seen + "linearizability: execution e2: no linearization of its register operations exists\n", resent, "atomicity", false},
		{"and a trace ring broken elsewhere", seen + "trace ring: execution e0: no linearization of its trace appends and reads exists\n", resent, "atomicity", false},
		{"and a lost update", seen + "lost update: commit c1-9 (e1 v3→4) returned ok but is not among the winners: v4 is c2-9\n", resent, "atomicity", false},
		{"a stale read alone", "verdict: FAIL (porcupine: Illegal)\nlinearizability: execution e0: no linearization of its register operations exists\n", resent, "linearizability", false},
		{"a commit that failed as not applied", "atomicity: commit c1-9 (e0 v3→4) failed as not applied but its write is v4 of the chain\n", resent, "atomicity", false},
		{"a guarantee the bug cannot break", seen, resent, "durability", false},
	} {
		dir := t.TempDir()
		if c.violations != "" {
			if err := os.WriteFile(filepath.Join(dir, "violations.txt"), []byte(c.violations), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, is.EvidenceSuffix), []byte(c.forwarding), 0o644); err != nil {
			t.Fatal(err)
		}
		got := Match("rqlite+process", "leader-pause", c.guarantee, dir)
		if (got != nil && got.ID == is.ID) != c.want {
			t.Errorf("%s: matched %v, want %v", c.name, got, c.want)
		}
	}
}
