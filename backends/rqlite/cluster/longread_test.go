package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestLongRead: one GET of /db/query at level none whose statement counts
// the rows asked for and reads the schema table (so that it opens a read
// transaction); an answer of one row is a read done, and an rqlite error,
// a status other than 200 or an answer without its row is an error naming
// the node.
func TestLongRead(t *testing.T) {
	var answer string
	var status int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/db/query" || q.Get("level") != "none" || !strings.Contains(q.Get("q"), "x < 4321") || !strings.Contains(q.Get("q"), "FROM sqlite_master") {
			http.Error(w, "unexpected request "+r.URL.String(), http.StatusTeapot)
			return
		}
		time.Sleep(30 * time.Millisecond)
		w.WriteHeader(status)
		fmt.Fprint(w, answer)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	for _, c := range []struct {
		status  int
		answer  string
		wantErr string
	}{
		{http.StatusOK, `{"results":[{"columns":["x"],"types":["integer"],"values":[[4323]]}]}`, ""},
		{http.StatusOK, `{"results":[{"error":"no such table: sqlite_master"}]}`, "want one row"},
		{http.StatusOK, `{"results":[{"columns":["x"]}]}`, "want one row"},
		{http.StatusServiceUnavailable, `not leader`, "503"},
		{http.StatusOK, `<html>`, "not rqlite's JSON"},
	} {
		status, answer = c.status, c.answer
		took, err := LongRead(ctx, addr, 4321)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.answer, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), addr)):
			t.Errorf("%s: error %v, want one naming %s and %q", c.answer, err, addr, c.wantErr)
		case took < 30*time.Millisecond:
			t.Errorf("%s: took %v, want the read's 30 ms", c.answer, took)
		}
	}
	f := &fakeNodes{nodes: []Node{{ID: "n1", HTTPAddr: addr}}}
	status, answer = http.StatusOK, `{"results":[{"values":[[1]]}]}`
	if _, err := (Control{Cluster: f}).LongRead(ctx, "n1", 4321); err != nil {
		t.Errorf("LongRead on n1: %v", err)
	}
	if _, err := (Control{Cluster: f}).LongRead(ctx, "n9", 4321); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("LongRead on n9: %v, want ErrUnknownNode", err)
	}
}
