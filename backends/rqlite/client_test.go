package rqlite

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// fakeNode is an HTTP server that answers like rqlite, as a test scripts.
type fakeNode struct {
	srv      *httptest.Server
	executes atomic.Int64
	queries  atomic.Int64
	levels   chan string // the level of every query, in order
}

func newFakeNode(t *testing.T, execute, query http.HandlerFunc) *fakeNode {
	t.Helper()
	f := &fakeNode{levels: make(chan string, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/db/execute":
			f.executes.Add(1)
			if !strings.Contains(r.URL.RawQuery, "transaction") {
				http.Error(w, "test: execute without transaction", http.StatusTeapot)
				return
			}
			execute(w, r)
		case "/db/query":
			f.queries.Add(1)
			f.levels <- r.URL.Query().Get("level")
			query(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeNode) addr() string { return strings.TrimPrefix(f.srv.URL, "http://") }

func reply(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }
}

func status(code int, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, msg, code) }
}

// storeOn returns a store over the given addresses, with the schema step
// skipped (the fakes do not keep tables).
func storeOn(t *testing.T, level Level, timeout time.Duration, addrs ...string) *Store {
	t.Helper()
	c, err := NewClient(Options{Nodes: addrs, Level: level, RequestTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{exec: c, level: level}
	s.st = openLocal(t, model.DefaultConfig()).st
	t.Cleanup(func() { s.Close() })
	return s
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func commitOne(s *Store) (*model.Execution, error) {
	exe := &model.Execution{ID: "e", DefinitionID: "d", Version: 2}
	return exe, s.Commit(context.Background(), exe, model.Batch{Emits: []model.Emit{{Event: model.Event{Name: "x"}}}})
}

func TestCommitOutcomes(t *testing.T) {
	versionRow := reply(`{"results":[{"columns":["version"],"types":["integer"],"values":[[7]]}]}`)
	cases := []struct {
		name       string
		execute    http.HandlerFunc
		wantErr    bool
		notApplied bool
		conflict   bool
	}{
		{name: "won", execute: reply(`{"results":[{"rows_affected":1},{"rows_affected":1}]}`)},
		{name: "lost: no rows_affected", execute: reply(`{"results":[{},{}]}`), wantErr: true, conflict: true},
		{name: "lost: zero rows", execute: reply(`{"results":[{"rows_affected":0},{"rows_affected":0}]}`), wantErr: true, conflict: true},
		{name: "statement error inside a 200", execute: reply(`{"results":[{"rows_affected":1},{"error":"UNIQUE constraint failed"}]}`), wantErr: true, notApplied: true},
		{name: "503 leader not found", execute: status(http.StatusServiceUnavailable, "leader not found"), wantErr: true, notApplied: true},
		{name: "400 bad request", execute: status(http.StatusBadRequest, "bad"), wantErr: true, notApplied: true},
		{name: "500 forward failed", execute: status(http.StatusInternalServerError, "forward"), wantErr: true},
		{name: "top-level error", execute: reply(`{"error":"leadership lost while committing log"}`), wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeNode(t, c.execute, versionRow)
			other := newFakeNode(t, c.execute, versionRow)
			s := storeOn(t, LevelNone, time.Second, f.addr(), other.addr())
			exe, err := commitOne(s)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if got := errors.Is(err, model.ErrNotApplied); got != c.notApplied {
				t.Errorf("ErrNotApplied = %v, want %v (%v)", got, c.notApplied, err)
			}
			conflict, isConflict := model.AsConflict(err)
			if isConflict != c.conflict {
				t.Errorf("conflict = %v, want %v (%v)", isConflict, c.conflict, err)
			}
			if isConflict {
				if conflict.Found == nil || *conflict.Found != 7 || conflict.Expected != 2 {
					t.Errorf("conflict %v, want expected 2 found 7", conflict)
				}
				if lvl := <-f.levels; lvl != "strong" {
					t.Errorf("the conflict's version was read at level %q, want strong", lvl)
				}
			}
			if wantVersion := map[bool]int64{true: 2, false: 3}[err != nil]; exe.Version != wantVersion {
				t.Errorf("version %d, want %d", exe.Version, wantVersion)
			}
			if err != nil && !c.notApplied && !c.conflict && f.executes.Load()+other.executes.Load() != 1 {
				t.Errorf("a write of unknown outcome was sent %d times", f.executes.Load()+other.executes.Load())
			}
			if strings.Contains(errString(err), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestWriteMovesOnOnlyWhenNotSent: a refused connection proves nothing was
// sent, so the write goes to the next node; a timeout after sending does
// not, so it is returned as unknown and never re-sent.
func TestWriteMovesOnOnlyWhenNotSent(t *testing.T) {
	ok := newFakeNode(t, reply(`{"results":[{"rows_affected":1},{"rows_affected":1}]}`), reply(`{"results":[{}]}`))
	s := storeOn(t, LevelStrong, time.Second, closedAddr(t), ok.addr())
	if _, err := commitOne(s); err != nil {
		t.Fatalf("commit via the second node: %v", err)
	}
	if ok.executes.Load() != 1 {
		t.Errorf("second node saw %d executes", ok.executes.Load())
	}

	block := make(chan struct{})
	hang := newFakeNode(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the whole request arrived: it could have been applied
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}, reply(`{"results":[{}]}`))
	t.Cleanup(func() { close(block) }) // runs before the server's Close
	spare := newFakeNode(t, reply(`{"results":[{"rows_affected":1},{"rows_affected":1}]}`), reply(`{"results":[{}]}`))
	s = storeOn(t, LevelStrong, 200*time.Millisecond, hang.addr(), spare.addr())
	_, err := commitOne(s)
	if err == nil || errors.Is(err, model.ErrNotApplied) {
		t.Fatalf("a timed-out write: %v; want an error of unknown outcome", err)
	}
	if spare.executes.Load() != 0 {
		t.Errorf("a write of unknown outcome was re-sent to another node")
	}
}

// TestReadsFailOver: a read that fails on one node is asked of the next.
func TestReadsFailOver(t *testing.T) {
	bad := newFakeNode(t, reply(`{}`), status(http.StatusInternalServerError, "boom"))
	good := newFakeNode(t, reply(`{}`), reply(`{"results":[{"columns":["data"],"types":["text"],"values":[["{\"id\":\"e\",\"version\":3}"]]}]}`))
	s := storeOn(t, LevelLinearizable, time.Second, bad.addr(), good.addr())
	exe, err := s.Load(context.Background(), "e")
	if err != nil || exe == nil || exe.Version != 3 {
		t.Fatalf("load: %v, %v", exe, err)
	}
	if lvl := <-good.levels; lvl != "linearizable" {
		t.Errorf("read at level %q, want the store's linearizable", lvl)
	}
}

func TestParseURL(t *testing.T) {
	o, err := ParseURL("//127.0.0.1:4001,127.0.0.1:4003?level=none&timeout=3s")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Nodes) != 2 || o.Level != LevelNone || o.RequestTimeout != 3*time.Second || o.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("parsed %+v", o)
	}
	if o, _ := ParseURL("//h:1"); o.Level != LevelStrong {
		t.Errorf("default level %q, want strong", o.Level)
	}
	if o, err := ParseURL("//h:1?guard=prestate"); err != nil || o.Guard != GuardPreState {
		t.Errorf("guard: %+v %v", o, err)
	}
	if o, _ := ParseURL("//h:1"); o.Guard != GuardPreState {
		t.Errorf("default guard %q, want prestate (the seed's data guard breaks property 3)", o.Guard)
	}
	if o, err := ParseURL("//h:1?guard=data"); err != nil || o.Guard != GuardData {
		t.Errorf("guard=data: %+v %v", o, err)
	}
	for _, bad := range []string{"", "h:1", "//", "//h", "//u:p@h:1", "//h:1?level=eventual", "//h:1?x=1", "//h:1?timeout=-1s", "//h:1?level=none&level=weak", "//h:1?guard=versions"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}

// TestServerTimeoutIsSent: with ServerTimeout set, every request carries
// rqlite's own timeout= beside gorqlite's parameters (the write keeps its
// ?transaction); without it, none does.
func TestServerTimeoutIsSent(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		want    string
	}{{0, ""}, {150 * time.Millisecond, "150ms"}} {
		got := make(chan string, 10)
		f := newFakeNode(t, func(w http.ResponseWriter, r *http.Request) {
			got <- r.URL.RawQuery
			reply(`{"results":[{"rows_affected":1}]}`)(w, r)
		}, func(w http.ResponseWriter, r *http.Request) {
			got <- r.URL.RawQuery
			reply(`{"results":[{"columns":["x"],"types":["integer"],"values":[[1]]}]}`)(w, r)
		})
		c, err := NewClient(Options{Nodes: []string{f.addr()}, ServerTimeout: tc.timeout})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := c.Execute(ctx, []Statement{{SQL: "INSERT INTO t VALUES (1)"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Query(ctx, LevelStrong, []Statement{{SQL: "SELECT 1"}}); err != nil {
			t.Fatal(err)
		}
		c.Close()
		for _, what := range []string{"execute", "query"} {
			raw := <-got
			if !strings.Contains(raw, "timeout="+tc.want) && tc.want != "" || tc.want == "" && strings.Contains(raw, "timeout=") {
				t.Errorf("ServerTimeout %v: %s sent %q, want timeout=%q", tc.timeout, what, raw, tc.want)
			}
			if what == "execute" && !strings.Contains(raw, "transaction") {
				t.Errorf("ServerTimeout %v: execute lost ?transaction: %q", tc.timeout, raw)
			}
		}
	}
}
