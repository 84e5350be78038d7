package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeNodes is a Cluster of HTTP servers that answer /status and /readyz
// as rqlite does, from a script.
type fakeNodes struct {
	nodes  []Node
	status map[string]func() string // node id -> /status body
	ready  map[string]bool
}

func (f *fakeNodes) Kind() string                           { return "fake" }
func (f *fakeNodes) Nodes() []Node                          { return f.nodes }
func (f *fakeNodes) Kill(context.Context, string) error     { return nil }
func (f *fakeNodes) Stop(context.Context, string) error     { return nil }
func (f *fakeNodes) Start(context.Context, string) error    { return nil }
func (f *fakeNodes) Pause(context.Context, string) error    { return nil }
func (f *fakeNodes) Resume(context.Context, string) error   { return nil }
func (f *fakeNodes) Isolate(context.Context, string) error  { return nil }
func (f *fakeNodes) Rejoin(context.Context, string) error   { return nil }
func (f *fakeNodes) IsolationAvailable() error              { return nil }
func (f *fakeNodes) SaveLogs(context.Context, string) error { return nil }
func (f *fakeNodes) Close() error                           { return nil }

func newFakeNodes(t *testing.T, n int) *fakeNodes {
	f := &fakeNodes{status: map[string]func() string{}, ready: map[string]bool{}}
	for _, id := range nodeIDs(n) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/status":
				fmt.Fprint(w, f.status[id]())
			case "/readyz":
				if !f.ready[id] {
					http.Error(w, "[+]node ok\n[+]leader does not exist", http.StatusServiceUnavailable)
				}
			}
		}))
		t.Cleanup(srv.Close)
		f.nodes = append(f.nodes, Node{ID: id, HTTPAddr: strings.TrimPrefix(srv.URL, "http://")})
		f.ready[id] = true
	}
	return f
}

// status renders a /status body; hashicorp/raft's stats are strings.
func status(state string, term, applied, commit uint64, leader string) string {
	return fmt.Sprintf(`{"store":{"raft":{"state":%q,"term":"%d","applied_index":"%d","commit_index":"%d"},"leader":{"node_id":%q}}}`,
		state, term, applied, commit, leader)
}

func TestLeaderPicksHighestTerm(t *testing.T) {
	f := newFakeNodes(t, 3)
	f.status["n1"] = func() string { return status("Leader", 2, 10, 10, "n1") } // deposed, cut off
	f.status["n2"] = func() string { return status("Leader", 3, 12, 12, "n2") }
	f.status["n3"] = func() string { return status("Follower", 3, 12, 12, "n2") }
	n, err := Leader(context.Background(), f)
	if err != nil || n.ID != "n2" {
		t.Fatalf("leader %v, %v; want n2", n, err)
	}
	if n, err := WaitLeader(context.Background(), f, "n2", 300*time.Millisecond); err == nil {
		t.Errorf("WaitLeader except n2 returned %v", n)
	}
	f.ready["n3"] = false
	if err := WaitReady(context.Background(), f, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "n3") {
		t.Errorf("WaitReady with n3 not ready: %v", err)
	}
}

func TestWaitAppliedWaitsForEveryNode(t *testing.T) {
	f := newFakeNodes(t, 3)
	var calls atomic.Int64
	f.status["n1"] = func() string { return status("Leader", 4, 20, 20, "n1") }
	f.status["n2"] = func() string { return status("Follower", 4, 20, 20, "n1") }
	f.status["n3"] = func() string {
		// Catches up after a few polls.
		if calls.Add(1) < 4 {
			return status("Follower", 4, 17, 17, "n1")
		}
		return status("Follower", 4, 20, 20, "n1")
	}
	idx, err := WaitApplied(context.Background(), f, 5*time.Second)
	if err != nil || idx != 20 || calls.Load() < 5 {
		t.Fatalf("index %d after %d polls of n3: %v", idx, calls.Load(), err)
	}
	f.status["n3"] = func() string { return status("Follower", 4, 17, 17, "n1") }
	if _, err := WaitApplied(context.Background(), f, 400*time.Millisecond); err == nil || !strings.Contains(err.Error(), "n3=17") {
		t.Errorf("WaitApplied with n3 behind: %v", err)
	}
	if _, err := GetStatus(context.Background(), "127.0.0.1:1"); err == nil {
		t.Error("status of a closed port")
	}
}
