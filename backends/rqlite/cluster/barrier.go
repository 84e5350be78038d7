package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// A node's Raft applied index is not a promise that its SQLite file holds
// the entries: right after a restart rqlite reports an applied index equal
// to the others' seconds before it answers reads with the rows (measured
// 2.8–4.6 s on v10.2.7). A barrier is the signal that means "applied": a
// row written through the leader after the traffic, which each node must
// show when read locally (level none). Raft applies entries in order, so a
// node whose file shows the barrier has applied everything before it.

// barrierTable holds the barriers: a table of the harness's own, outside
// the six the checks read.
const barrierTable = "storecheck_barrier"

// Barrier writes a fresh barrier through the leader and waits until every
// node's own file shows it, polling each with a read at level none. It
// returns how long the wait took after the write; the error says which
// nodes did not show it within timeout.
func Barrier(ctx context.Context, c Cluster, timeout time.Duration) (time.Duration, error) {
	leader, err := Leader(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("barrier: %w", err)
	}
	token, err := barrierToken()
	if err != nil {
		return 0, err
	}
	// Both statements in the array form: rqlite before 8.43 (8.0, 8.20
	// measured) refuses a request that mixes a bare string with an array
	// ("400 Bad Request: invalid JSON body").
	stmts := []any{
		[]any{"CREATE TABLE IF NOT EXISTS " + barrierTable + " (token TEXT PRIMARY KEY)"},
		[]any{"INSERT INTO " + barrierTable + " (token) VALUES (?)", token},
	}
	if err := execute(ctx, leader.HTTPAddr, stmts); err != nil {
		return 0, fmt.Errorf("barrier: write through leader %s: %w", leader.ID, err)
	}
	start := time.Now()
	pending := map[string]Node{}
	for _, n := range c.Nodes() {
		pending[n.ID] = n
	}
	err = poll(ctx, timeout, func(ctx context.Context) bool {
		for id, n := range pending {
			if shows(ctx, n.HTTPAddr, token) {
				delete(pending, id)
			}
		}
		return len(pending) == 0
	})
	if err != nil {
		var ids []string
		for id := range pending {
			ids = append(ids, id)
		}
		return time.Since(start), fmt.Errorf("barrier: nodes %s did not apply it within %v: %w", strings.Join(ids, ", "), timeout, err)
	}
	return time.Since(start), nil
}

func barrierToken() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("barrier token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// execute posts statements to a node's /db/execute in one transaction.
func execute(ctx context.Context, addr string, stmts []any) error {
	body, err := json.Marshal(stmts)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/db/execute?transaction", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	var out struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("execute: %w", err)
	}
	for _, r := range out.Results {
		if r.Error != "" {
			return fmt.Errorf("execute: %s", r.Error)
		}
	}
	return nil
}

// shows reports whether the node at addr holds the barrier in its own
// file.
func shows(ctx context.Context, addr, token string) bool {
	q := url.Values{"level": {"none"}, "q": {"SELECT token FROM " + barrierTable + " WHERE token = '" + token + "'"}}
	body, err := get(ctx, addr, "/db/query?"+q.Encode())
	if err != nil {
		return false
	}
	var out struct {
		Results []struct {
			Values [][]any `json:"values"`
			Error  string  `json:"error"`
		} `json:"results"`
	}
	if json.Unmarshal(body, &out) != nil || len(out.Results) == 0 {
		return false
	}
	return out.Results[0].Error == "" && len(out.Results[0].Values) == 1
}
