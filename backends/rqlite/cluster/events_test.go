package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logCluster is a Cluster whose nodes' logs are files in a folder.
type logCluster struct {
	Cluster
	dir string
}

func (l logCluster) Kind() string  { return "process" }
func (l logCluster) Nodes() []Node { return []Node{{ID: "n1"}} }
func (l logCluster) LogPath(id string) (string, error) {
	return filepath.Join(l.dir, id+".log"), nil
}

// TestWaitEventSeesOnlyLinesAfterTheMark: an event logged before the mark
// is not the one awaited; one logged after it, even in two writes, is.
func TestWaitEventSeesOnlyLinesAfterTheMark(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "n1.log")
	if err := os.WriteFile(path, []byte("[raft] [INFO]  copied to local snapshot: bytes=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Control{Cluster: logCluster{dir: dir}}
	if err := c.EventsAvailable(); err != nil {
		t.Fatal(err)
	}
	mark, err := c.LogMark("n1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, "n1", EventInstall, mark, 50*time.Millisecond); err == nil {
		t.Fatal("an install logged before the mark was taken for a new one")
	}
	go func() {
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		defer f.Close()
		f.WriteString("[raft] [INFO]  copied to lo")
		time.Sleep(20 * time.Millisecond)
		f.WriteString("cal snapshot: bytes=2\n")
	}()
	line, err := c.WaitEvent(ctx, "n1", EventInstall, mark, 5*time.Second)
	if err != nil || !strings.Contains(line, "bytes=2") {
		t.Fatalf("line %q, %v; want the second install", line, err)
	}
	if _, err := c.WaitEvent(ctx, "n1", "compaction-of-sorts", mark, time.Millisecond); err == nil {
		t.Error("an unknown event was awaited")
	}
	if err := (Control{Cluster: fakeNoLogs{}}).EventsAvailable(); err == nil {
		t.Error("events available on a cluster without live logs")
	}
}

type fakeNoLogs struct{ Cluster }

func (fakeNoLogs) Kind() string { return "container" }
