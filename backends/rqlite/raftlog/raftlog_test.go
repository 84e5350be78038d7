package raftlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func cmd(index, term uint64, sql string) Entry {
	return Entry{Index: index, Term: term, Type: typeCommand, Data: []byte("\x08\x02\x12" + sql + "\x12\x04")}
}

// TestCompareFindsTheShapeSeen: the logs of three nodes as a leader-stall
// run left them (docs/KNOWN-ISSUES.md#raft-heartbeat-term-race): at index
// 9293 n1 and n2 hold the term-5 leader's no-op and n3 a command of term
// 5; all agree elsewhere. Compare names that index, the same-term
// mismatch, and what each node holds; logs that agree give nothing.
func TestCompareFindsTheShapeSeen(t *testing.T) {
	common := []Entry{cmd(9291, 4, "INSERT INTO outbox"), cmd(9292, 4, "DELETE FROM timers")}
	leader := append(append([]Entry(nil), common...), Entry{Index: 9293, Term: 5, Type: typeNoop}, cmd(9294, 5, "UPDATE executions"))
	stale := append(append([]Entry(nil), common...), cmd(9293, 5, "SELECT version FROM executions"), cmd(9294, 5, "UPDATE executions"))
	logs := map[string][]Entry{}
	for node, entries := range map[string][]Entry{"n1": leader, "n2": leader, "n3": stale} {
		path := filepath.Join(t.TempDir(), "raft.db")
		if err := Write(path, entries); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(entries) || got[2].Index != 9293 || got[2].Term != 5 || got[2].Type != entries[2].Type || string(got[3].Data) != string(entries[3].Data) {
			t.Fatalf("%s read back as %+v", node, got)
		}
		logs[node] = got
	}
	ms := Compare(logs)
	if len(ms) != 1 || ms[0].Index != 9293 || !ms[0].SameTerm {
		t.Fatalf("mismatches %+v, want one at 9293 with the same term", ms)
	}
	if ms[0].Held["n1"] != "term 5 no-op" || !strings.Contains(ms[0].Held["n3"], `"SELECT version FROM executions"`) {
		t.Errorf("held: %v", ms[0].Held)
	}
	if ms := Compare(map[string][]Entry{"n1": leader, "n2": leader}); len(ms) != 0 {
		t.Errorf("equal logs: %+v", ms)
	}
	// Bootstrap configurations list the same servers in each node's own
	// order: not a mismatch. A configuration against a command is.
	boot := func(servers string) []Entry {
		return []Entry{{Index: 1, Term: 1, Type: typeConfig, Data: []byte(servers)}}
	}
	if ms := Compare(map[string][]Entry{"n1": boot("n1 n2"), "n2": boot("n2 n1")}); len(ms) != 0 {
		t.Errorf("bootstrap configurations in two orders: %+v", ms)
	}
	if ms := Compare(map[string][]Entry{"n1": boot("n1 n2"), "n2": {cmd(1, 1, "INSERT")}}); len(ms) != 1 || !ms[0].SameTerm {
		t.Errorf("a configuration against a command: %+v", ms)
	}
	// A tail of another term at an index both hold is a mismatch too, but
	// not a broken Log Matching.
	other := append(append([]Entry(nil), common...), Entry{Index: 9293, Term: 4, Type: typeNoop})
	if ms := Compare(map[string][]Entry{"n1": leader, "n3": other}); len(ms) != 1 || ms[0].SameTerm {
		t.Errorf("another term at 9293: %+v", ms)
	}
}

// TestReadRefusesWhatIsNotALog: a file that is not bbolt, or a bbolt file
// without the logs bucket, is an error, not an empty log.
func TestReadRefusesWhatIsNotALog(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "raft.db")
	if err := os.WriteFile(junk, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(junk); err == nil {
		t.Error("read a junk file")
	}
	empty := filepath.Join(t.TempDir(), "raft.db")
	db, err := bolt.Open(empty, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Read(empty); err == nil || !strings.Contains(err.Error(), "no logs bucket") {
		t.Errorf("read a file without logs: %v", err)
	}
}

// TestFindUnledFindsTheShapeSeenAlone: the logs a leader-stall run at level
// strong left (rqlited df4edc42): the thawed former leader n3 kept its whole
// log, and its first entry of the next term, at index 1731, is a command
// where that term's leader logged its no-op; n1 and n2 had compacted that
// index into snapshots, so no two logs hold it. FindUnled names it; a term
// opened by a no-op, a log cut by a snapshot (a gap, or a log that starts
// mid-term) and the bootstrap configuration are not named, and Report
// says Log Matching is broken.
func TestFindUnledFindsTheShapeSeenAlone(t *testing.T) {
	thawed := []Entry{{Index: 1, Term: 1, Type: typeConfig}, {Index: 2, Term: 2, Type: typeNoop},
		cmd(1730, 2, "INSERT INTO outbox"), cmd(1731, 3, "SELECT version FROM executions"), cmd(1732, 3, "UPDATE executions"),
		{Index: 7931, Term: 4, Type: typeNoop}}
	compacted := []Entry{cmd(4684, 3, "UPDATE executions"), cmd(4685, 3, "INSERT INTO outbox"), {Index: 7931, Term: 4, Type: typeNoop}, cmd(7932, 4, "UPDATE executions")}
	got := FindUnled("n3", thawed)
	if len(got) != 1 || got[0].Index != 1731 || got[0].Term != 3 || got[0].PrevTerm != 2 {
		t.Fatalf("FindUnled(n3) = %+v; want index 1731, term 3 after term 2", got)
	}
	if s := got[0].String(); !strings.Contains(s, "n3's first entry of term 3 is term 3 command") || !strings.Contains(s, `"SELECT version FROM executions"`) {
		t.Errorf("described as %q", s)
	}
	if got := FindUnled("n1", compacted); len(got) != 0 {
		t.Errorf("a log that starts mid-term and a term opened by a no-op: %+v", got)
	}
	gap := []Entry{cmd(10, 2, "INSERT"), cmd(20, 3, "UPDATE")} // a snapshot between them
	if got := FindUnled("n2", gap); len(got) != 0 {
		t.Errorf("a term that starts after a gap: %+v", got)
	}

	dir := t.TempDir()
	for id, entries := range map[string][]Entry{"n1": compacted, "n2": compacted, "n3": thawed} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Write(filepath.Join(dir, id, "raft.db"), entries); err != nil {
			t.Fatal(err)
		}
	}
	c := Report(dir, []string{"n1", "n2", "n3"})
	if !c.Breaks() || len(c.Broken) != 0 || len(c.Unled) != 1 || !strings.Contains(c.Text, "index 1731: "+BrokenMatching) {
		t.Errorf("Report: breaks %v, %d same-index, %d unled:\n%s", c.Breaks(), len(c.Broken), len(c.Unled), c.Text)
	}
	if line := c.Line(); !strings.HasPrefix(line, "at index 1731 n3's first entry of term 3") || strings.Contains(line, "more") {
		t.Errorf("Line: %q", line)
	}
	// Where the other logs still hold the index, both checks name it: one
	// index, counted once.
	both := Comparison{Broken: []Mismatch{{Index: 1731, SameTerm: true}, {Index: 1732, SameTerm: true}}, Unled: c.Unled}
	if line := both.Line(); !strings.HasSuffix(line, "(and 1 more indexes)") {
		t.Errorf("Line with both: %q", line)
	}
}
