package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRqlited writes a stand-in rqlited that says why it cannot start and
// exits at once, in a folder every user can read (the nodes may run under
// user ids of their own).
func fakeRqlited(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "storecheck-fake-rqlited-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rqlited")
	script := "#!/bin/sh\necho \"fake rqlited: refusing to start with $*\" >&2\nexit 3\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestFailedStartLeavesLogs: a cluster whose servers exit at once fails
// to start without waiting out its ready timeout, and leaves each node's log in Config.LogDir, which the error names.
func TestFailedStartLeavesLogs(t *testing.T) {
	bin := fakeRqlited(t)
	logs := filepath.Join(t.TempDir(), "run", "logs")
	start := time.Now()
	p, err := StartProcesses(context.Background(), bin, Config{Nodes: 3, LogDir: logs, ReadyTimeout: time.Minute})
	if err == nil {
		p.Close()
		t.Fatal("a cluster of servers that exit at once started")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the failed start took %v: it waited for the ready timeout", d)
	}
	if !strings.Contains(err.Error(), "exited while the cluster started") || !strings.Contains(err.Error(), "server logs in "+logs) {
		t.Errorf("error %q should say a node exited and name %s", err, logs)
	}
	// The node the error names exited on its own and must have told its
	// log why; the others may have been stopped before they said anything
	// (which exits first is up to the scheduler).
	var exited string
	for _, id := range []string{"n1", "n2", "n3"} {
		if strings.Contains(err.Error(), "rqlited "+id+" exited") {
			exited = id
		}
	}
	if exited == "" {
		t.Fatalf("error %q names no node that exited", err)
	}
	if _, rerr := os.Stat(filepath.Join(logs, "n1.log")); rerr != nil {
		t.Fatalf("n1's log is gone: %v", rerr)
	}
	b, rerr := os.ReadFile(filepath.Join(logs, exited+".log"))
	if rerr != nil {
		t.Fatalf("the log of %s, which the error names, is gone: %v", exited, rerr)
	}
	if log := string(b); !strings.Contains(log, "fake rqlited: refusing to start") || !strings.Contains(log, "exited") {
		t.Errorf("%s.log lacks the server's own account:\n%s", exited, log)
	}
	t.Logf("%v", err)
}

// TestSaveNode: a node's data folder is copied as it is at that moment —
// its snapshot store and database, not the files left out (the Raft log) —
// and later changes to the node's files do not reach the copy; an unknown
// node is an error.
func TestSaveNode(t *testing.T) {
	data, out := t.TempDir(), t.TempDir()
	files := map[string]string{
		"db.sqlite":                 "old database",
		"clean_snapshot":            "fingerprint",
		"raft.db":                   "raft log",
		"wsnapshots/4-9722/data.db": "installed snapshot",
	}
	for name, text := range files {
		path := filepath.Join(data, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &Processes{procs: []*proc{{node: Node{ID: "n2"}, data: data}}}
	if err := p.SaveNode(context.Background(), "n2", filepath.Join(out, "1"), "raft.db"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "db.sqlite"), []byte("restored"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.SaveNode(context.Background(), "n2", filepath.Join(out, "2")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"1/db.sqlite", "old database"},
		{"1/clean_snapshot", "fingerprint"},
		{"1/wsnapshots/4-9722/data.db", "installed snapshot"},
		{"2/db.sqlite", "restored"},
		{"2/raft.db", "raft log"},
	} {
		got, err := os.ReadFile(filepath.Join(out, c.name))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "1", "raft.db")); !os.IsNotExist(err) {
		t.Errorf("the Raft log was copied (stat: %v)", err)
	}
	if err := p.SaveNode(context.Background(), "n9", filepath.Join(out, "3")); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown node: %v", err)
	}
}
