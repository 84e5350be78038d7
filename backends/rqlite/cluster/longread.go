package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// longReadClient carries long reads: the caller's context bounds each,
// not the 5 s of httpClient.
var longReadClient = &http.Client{}

// longReadSQL is the long read: a count of rows rows made by a recursive
// query, added to a count of the schema table so that the statement opens a
// read transaction on the database file and holds it while the rows are
// counted. It reads nothing of the store's own tables and changes nothing.
const longReadSQL = "SELECT (SELECT count(*) FROM sqlite_master) + " +
	"(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d) SELECT count(*) FROM c)"

// LongRead sends node addr one long read (longReadSQL counting rows rows)
// at level none, so that the node answers it from its own database, and
// returns how long it took. A read the node answered with an error is an
// error.
func LongRead(ctx context.Context, addr string, rows int) (time.Duration, error) {
	q := url.Values{"level": {"none"}, "q": {fmt.Sprintf(longReadSQL, rows)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/db/query?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := longReadClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("long read on %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("long read on %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return took, fmt.Errorf("long read on %s: %s: %s", addr, resp.Status, bytes.TrimSpace(body))
	}
	var answer struct {
		Results []struct {
			Error  string  `json:"error"`
			Values [][]any `json:"values"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return took, fmt.Errorf("long read on %s: the answer is not rqlite's JSON: %w", addr, err)
	}
	if len(answer.Results) != 1 || answer.Results[0].Error != "" || len(answer.Results[0].Values) != 1 {
		return took, fmt.Errorf("long read on %s: want one row, got %s", addr, bytes.TrimSpace(body))
	}
	return took, nil
}

// LongRead sends node id one long read (the package's LongRead).
func (c Control) LongRead(ctx context.Context, id string, rows int) (time.Duration, error) {
	for _, n := range c.Nodes() {
		if n.ID == id {
			return LongRead(ctx, n.HTTPAddr, rows)
		}
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownNode, id)
}
