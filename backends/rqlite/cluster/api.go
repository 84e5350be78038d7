package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// httpClient is for the harness's own calls to node APIs (status, readiness,
// step-down); the store under test has its own.
var httpClient = &http.Client{Timeout: 5 * time.Second}

// Status is the part of a node's GET /status that the harness reads.
type Status struct {
	// State is the node's Raft state: Leader, Follower, Candidate, Shutdown.
	State string
	// Term is its current Raft term.
	Term uint64
	// AppliedIndex and CommitIndex are its Raft log indexes.
	AppliedIndex, CommitIndex uint64
	// LeaderID is the node it believes leads, "" for none.
	LeaderID string
	// Version and Commit are the server's build, as it reports them
	// ("unknown" for a build without release flags).
	Version, Commit string
}

// GetStatus reads GET /status of the node at addr.
func GetStatus(ctx context.Context, addr string) (Status, error) {
	body, err := get(ctx, addr, "/status")
	if err != nil {
		return Status{}, err
	}
	var raw struct {
		Build struct {
			Version string `json:"version"`
			Commit  string `json:"commit"`
		} `json:"build"`
		Store struct {
			Raft   map[string]any `json:"raft"`
			Leader struct {
				NodeID string `json:"node_id"`
			} `json:"leader"`
		} `json:"store"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Status{}, fmt.Errorf("status of %s: %w", addr, err)
	}
	st := Status{LeaderID: raw.Store.Leader.NodeID, Version: raw.Build.Version, Commit: raw.Build.Commit}
	st.State, _ = raw.Store.Raft["state"].(string)
	for key, dst := range map[string]*uint64{"term": &st.Term, "applied_index": &st.AppliedIndex, "commit_index": &st.CommitIndex} {
		// hashicorp/raft reports its stats as strings; accept numbers too.
		switch v := raw.Store.Raft[key].(type) {
		case string:
			*dst, err = strconv.ParseUint(v, 10, 64)
		case json.Number:
			*dst, err = strconv.ParseUint(v.String(), 10, 64)
		default:
			err = fmt.Errorf("missing")
		}
		if err != nil {
			return Status{}, fmt.Errorf("status of %s: raft %s: %w", addr, key, err)
		}
	}
	return st, nil
}

// ForwardStats is what a node's GET /debug/vars says of the requests it
// forwarded to the leader: rqlite's counters of its HTTP service and its
// cluster client, named the same in rqlite 8 and 10.
type ForwardStats struct {
	// Forwarded counts writes it forwarded and got an answer to
	// (remote_executions); GivenUp those it gave up on
	// (remote_executions_failed).
	Forwarded, GivenUp int64
	// FailedAttempts counts forwarded writes' attempts that failed
	// (num_client_execute_retries); ReadFailedAttempts those of forwarded
	// reads and other requests (num_client_query_retries,
	// num_client_request_retries, num_client_load_retries).
	FailedAttempts, ReadFailedAttempts int64
	// NewConnections counts requests, writes or reads, sent once more on
	// a new connection after an attempt failed (num_client_force_new_conn,
	// rqlite 10 since 079783be); -1 when the build has no such counter.
	NewConnections int64
}

// ResentSignature begins the line of a run's evidence that says a node
// sent forwarded writes to the leader again (ForwardStats.Resent): the
// signature of the known issue rqlite-forwarded-write-resent.
const ResentSignature = "forwarded writes sent to the leader again after a failed attempt: "

// Resent is how many times the node sent a forwarded write again after an
// attempt failed. On rqlite 10 that is its last-ditch attempts on a new
// connection, less those of reads: asked for no retry, as the HTTP API
// asks by default, a request whose attempt failed gets exactly one such
// attempt, and adds perResent to its kind's retries counter. On a build
// without that counter (rqlite 8), every failed attempt of a write it did
// not give up on was followed by another.
func (st ForwardStats) Resent() int64 {
	if st.NewConnections < 0 {
		return max(0, st.FailedAttempts-st.GivenUp)
	}
	if st.NewConnections == 0 {
		return 0
	}
	// Reads sent again, rounded up: reads' retries that are not a whole
	// number of reads are a read whose counters were read between its two
	// counts, not a write; and a write taken as sent again that was not
	// would let the known issue explain a FAIL it did not cause.
	per := st.perResent()
	return max(0, st.NewConnections-(st.ReadFailedAttempts+per-1)/per)
}

// perResent is how much one request sent again on a new connection adds to
// its retries counter: 1 since rqlite 10.2.7; 2 in 10.0.0–10.2.6, whose
// cluster client counted the failed attempt and the last-ditch one
// (015d51a7 removed the second). Writes and reads count alike, so it is
// the retries of both over the new connections, to the nearest whole.
func (st ForwardStats) perResent() int64 {
	retries := st.FailedAttempts + st.ReadFailedAttempts
	return max(1, (retries+st.NewConnections/2)/st.NewConnections)
}

// GetForwardStats reads GET /debug/vars of the node at addr.
func GetForwardStats(ctx context.Context, addr string) (ForwardStats, error) {
	body, err := get(ctx, addr, "/debug/vars")
	if err != nil {
		return ForwardStats{}, err
	}
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(body, &vars); err != nil {
		return ForwardStats{}, fmt.Errorf("/debug/vars of %s: %w", addr, err)
	}
	st := ForwardStats{NewConnections: -1}
	counters := map[string]*int64{
		"remote_executions": &st.Forwarded, "remote_executions_failed": &st.GivenUp,
		"num_client_execute_retries": &st.FailedAttempts, "num_client_force_new_conn": &st.NewConnections,
		"num_client_query_retries": &st.ReadFailedAttempts, "num_client_request_retries": &st.ReadFailedAttempts,
		"num_client_load_retries": &st.ReadFailedAttempts,
	}
	for _, raw := range vars {
		var group map[string]json.RawMessage
		if json.Unmarshal(raw, &group) != nil {
			continue // not an expvar map
		}
		for name, dst := range counters {
			v, ok := group[name]
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return ForwardStats{}, fmt.Errorf("/debug/vars of %s: %s: %w", addr, name, err)
			}
			if *dst < 0 {
				*dst = 0
			}
			*dst += n
		}
	}
	return st, nil
}

// Ready reports whether GET /readyz of the node at addr answers 200: it
// knows a leader it can reach and its store is ready.
func Ready(ctx context.Context, addr string) bool {
	_, err := get(ctx, addr, "/readyz")
	return err == nil
}

// StepDown asks the node at addr to make the leader step down (POST
// /leader, rqlite v8.34 and later); a follower forwards the request.
func StepDown(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/leader?wait", nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("step down via %s: %w", addr, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("step down via %s: %s: %s", addr, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

func get(ctx context.Context, addr, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s on %s: %w", path, addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s on %s: %w", path, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s on %s: %s: %s", path, addr, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

// Leader returns the node that leads now: of the nodes that answer and call
// themselves leader, the one with the highest term (a deposed leader cut off
// from the others may not know yet).
func Leader(ctx context.Context, c Cluster) (Node, error) {
	return leaderWithin(ctx, c, leaderProbeTimeout)
}

// leaderWithin is Leader with the nodes' answers bounded by probe.
func leaderWithin(ctx context.Context, c Cluster, probe time.Duration) (Node, error) {
	nodes := c.Nodes()
	type answer struct {
		node Node
		st   Status
		err  error
	}
	ctx, cancel := context.WithTimeout(ctx, probe)
	defer cancel()
	answers := make(chan answer, len(nodes))
	for _, n := range nodes {
		go func() {
			st, err := GetStatus(ctx, n.HTTPAddr)
			answers <- answer{n, st, err}
		}()
	}
	var best Node
	var bestTerm, maxTerm uint64
	found := false
	answered := 0
	for range nodes {
		a := <-answers
		if a.err != nil {
			continue
		}
		answered++
		maxTerm = max(maxTerm, a.st.Term)
		if a.st.State == "Leader" && (!found || a.st.Term > bestTerm) {
			best, bestTerm, found = a.node, a.st.Term, true
		}
		// A node of a higher term than every node of an answering
		// majority cannot exist (a majority voted it in, and a voter
		// takes the term): the majority's leader of the highest term is
		// the leader, whatever the silent nodes would say.
		if found && bestTerm == maxTerm && answered > len(nodes)/2 {
			return best, nil
		}
	}
	if !found {
		return Node{}, fmt.Errorf("no node is leader")
	}
	return best, nil
}

// waitLeaderProbe bounds each round of WaitLeader's polling: while an
// election runs, no answering majority names a leader, and a round lasts
// until the silent node's probe gives up; a short probe keeps the measured
// time to a new leader within about 0.4 s of the election (a node that
// misses it under load is asked again in the next round).
const waitLeaderProbe = 300 * time.Millisecond

// leaderProbeTimeout bounds the nodes' /status answers when looking for
// the leader. The nodes are asked at once, and the answer is known as soon
// as a majority has answered, so a frozen or cut-off node (which never
// answers) delays nothing, where the HTTP client's 5 s per node in turn
// made a new leader elected in 2 s look like one elected in 15 s. A live node answers /status on loopback
// in milliseconds, and in well under a second on a 2-core machine loaded
// to a load average of 8 (measured while the soak ran).
const leaderProbeTimeout = 2 * time.Second

// WaitLeader polls until some node other than except leads and answers
// /readyz, for at most timeout.
func WaitLeader(ctx context.Context, c Cluster, except string, timeout time.Duration) (Node, error) {
	var last error
	var leader Node
	err := poll(ctx, timeout, func(ctx context.Context) bool {
		n, err := leaderWithin(ctx, c, waitLeaderProbe)
		leader = n
		if err == nil && n.ID == except {
			err = fmt.Errorf("%s still leads", except)
		}
		if err == nil && !Ready(ctx, n.HTTPAddr) {
			err = fmt.Errorf("leader %s not ready", n.ID)
		}
		if err != nil && ctx.Err() == nil {
			last = err
		}
		return err == nil
	})
	if err != nil {
		return Node{}, fmt.Errorf("wait for a leader: %w (last: %v)", err, last)
	}
	return leader, nil
}

// WaitReady polls until every node answers /readyz, for at most timeout.
func WaitReady(ctx context.Context, c Cluster, timeout time.Duration) error {
	var notReady string
	err := poll(ctx, timeout, func(ctx context.Context) bool {
		for _, n := range c.Nodes() {
			if !Ready(ctx, n.HTTPAddr) {
				if ctx.Err() == nil {
					notReady = n.ID
				}
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("wait for every node to be ready (%s is not): %w", notReady, err)
	}
	return nil
}

// WaitNodeReady polls until the node answers /readyz.
func WaitNodeReady(ctx context.Context, n Node, timeout time.Duration) error {
	if err := poll(ctx, timeout, func(ctx context.Context) bool { return Ready(ctx, n.HTTPAddr) }); err != nil {
		return fmt.Errorf("wait for %s to be ready: %w", n.ID, err)
	}
	return nil
}

// WaitApplied polls until every node has applied the leader's whole log:
// the same applied index on all of them, equal to the leader's commit
// index, twice in a row. It returns that index.
func WaitApplied(ctx context.Context, c Cluster, timeout time.Duration) (uint64, error) {
	var index uint64
	var seen string
	stable := 0
	err := poll(ctx, timeout, func(ctx context.Context) bool {
		var leaderCommit uint64
		applied := map[uint64]bool{}
		var parts []string
		for _, n := range c.Nodes() {
			st, err := GetStatus(ctx, n.HTTPAddr)
			if err != nil {
				if ctx.Err() == nil { // keep the last full picture over the deadline's error
					seen = err.Error()
				}
				stable = 0
				return false
			}
			if st.State == "Leader" {
				leaderCommit = st.CommitIndex
			}
			applied[st.AppliedIndex] = true
			parts = append(parts, fmt.Sprintf("%s=%d", n.ID, st.AppliedIndex))
		}
		seen = fmt.Sprintf("applied %v, leader commit %d", parts, leaderCommit)
		if len(applied) != 1 || leaderCommit == 0 || !applied[leaderCommit] {
			stable = 0
			return false
		}
		if index == leaderCommit {
			stable++
		} else {
			index, stable = leaderCommit, 1
		}
		return stable >= 2
	})
	if err != nil {
		return 0, fmt.Errorf("wait for every node to apply the log: %w (%s)", err, seen)
	}
	return index, nil
}

// poll calls ok every 100ms until it returns true, ctx ends or timeout
// passes.
func poll(ctx context.Context, timeout time.Duration, ok func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if ok(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
