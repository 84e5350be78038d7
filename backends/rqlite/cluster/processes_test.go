package cluster

import (
	"context"
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
