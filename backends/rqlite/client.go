package rqlite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rqlite/gorqlite"
)

// Environment variables that carry credentials, if the cluster needs them.
const (
	EnvUsername = "RQLITE_USERNAME"
	EnvPassword = "RQLITE_PASSWORD"
)

// Client is the Executor over real rqlite nodes, through gorqlite. Each
// gorqlite connection knows one node and serves one call at a time; the
// client keeps an idle pool of them per node and level.
type Client struct {
	nodes   []string
	timeout time.Duration
	httpc   *http.Client
	cur     atomic.Int64 // index of the preferred node

	mu     sync.Mutex
	idle   map[poolKey][]*gorqlite.Connection
	closed bool
}

type poolKey struct {
	node  string
	level Level
}

var _ Executor = (*Client)(nil)

// NewClient returns a client for opt's nodes. It contacts nothing.
func NewClient(opt Options) (*Client, error) {
	opt, err := opt.normalize()
	if err != nil {
		return nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	tr := &traceTransport{base: base, user: os.Getenv(EnvUsername), password: os.Getenv(EnvPassword)}
	if opt.ServerTimeout > 0 {
		tr.serverTimeout = opt.ServerTimeout.String()
	}
	return &Client{
		nodes:   append([]string(nil), opt.Nodes...),
		timeout: opt.RequestTimeout,
		httpc:   &http.Client{Transport: tr},
		idle:    map[poolKey][]*gorqlite.Connection{},
	}, nil
}

// Nodes returns the addresses the client talks to.
func (c *Client) Nodes() []string { return append([]string(nil), c.nodes...) }

// Close closes every idle connection; calls after it fail.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conns := range c.idle {
		for _, conn := range conns {
			conn.Close()
		}
	}
	c.idle, c.closed = nil, true
	c.httpc.CloseIdleConnections()
	return nil
}

// get takes an idle connection to node at level, or opens one (gorqlite
// does no I/O when cluster discovery is off).
func (c *Client) get(key poolKey) (*gorqlite.Connection, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("client is closed")
	}
	if conns := c.idle[key]; len(conns) > 0 {
		conn := conns[len(conns)-1]
		c.idle[key] = conns[:len(conns)-1]
		c.mu.Unlock()
		return conn, nil
	}
	c.mu.Unlock()
	u := url.URL{Scheme: "http", Host: key.node, Path: "/"}
	u.RawQuery = url.Values{"disableClusterDiscovery": {"true"}, "level": {string(key.level)}}.Encode()
	conn, err := gorqlite.OpenWithClient(u.String(), c.httpc)
	if err != nil {
		return nil, fmt.Errorf("open gorqlite connection to %s: %w", key.node, err)
	}
	return conn, nil
}

// put returns a connection to the idle pool.
func (c *Client) put(key poolKey, conn *gorqlite.Connection) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		conn.Close()
		return
	}
	c.idle[key] = append(c.idle[key], conn)
}

// attempt is what one HTTP request did, as the transport saw it.
type attempt struct {
	wrote  atomic.Bool  // the whole request went out
	status atomic.Int64 // the HTTP status, 0 without a response
}

type attemptKey struct{}

// traceTransport records, for a request whose context carries an
// *attempt, the response status; and sets the credentials and rqlite's
// timeout= parameter, if any (gorqlite sends neither).
type traceTransport struct {
	base           http.RoundTripper
	user, password string
	serverTimeout  string // rqlite's timeout= (Options.ServerTimeout), or ""
}

func (t *traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.user != "" || t.serverTimeout != "" {
		req = req.Clone(req.Context())
	}
	if t.user != "" {
		req.SetBasicAuth(t.user, t.password)
	}
	if t.serverTimeout != "" {
		// Appended, not re-encoded: gorqlite's keys without a value
		// (?transaction) stay as they are.
		if req.URL.RawQuery != "" {
			req.URL.RawQuery += "&"
		}
		req.URL.RawQuery += "timeout=" + url.QueryEscape(t.serverTimeout)
	}
	resp, err := t.base.RoundTrip(req)
	if a, ok := req.Context().Value(attemptKey{}).(*attempt); ok && resp != nil {
		a.status.Store(int64(resp.StatusCode))
	}
	return resp, err
}

// call runs fn with a connection to node, under the request timeout,
// watching the request it makes.
func (c *Client) call(ctx context.Context, key poolKey, fn func(context.Context, *gorqlite.Connection) error) (*attempt, error) {
	a := &attempt{}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				a.wrote.Store(true)
			}
		},
	})
	ctx = context.WithValue(ctx, attemptKey{}, a)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := c.get(key)
	if err != nil {
		return a, err
	}
	err = fn(ctx, conn)
	c.put(key, conn)
	return a, err
}

// preferred returns the index of the node to try first.
func (c *Client) preferred() int { return int(c.cur.Load()) % len(c.nodes) }

// moveOn makes the node after i the preferred one, unless another call
// already moved on.
func (c *Client) moveOn(i int) { c.cur.CompareAndSwap(int64(i), int64((i+1)%len(c.nodes))) }

// notSentStatus reports whether an HTTP status proves rqlite refused the
// request before it reached the Raft log: a malformed or unauthorised
// request, or 503, which the execute handler answers when the node knows
// no leader (or its store is not open).
func notSentStatus(status int64) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusMethodNotAllowed, http.StatusServiceUnavailable:
		return true
	}
	return false
}

// Execute implements Executor: one /db/execute?transaction request. A write
// is sent again, to the next node, only while it provably was not applied.
func (c *Client) Execute(ctx context.Context, stmts []Statement) ([]Result, error) {
	ps := parameterized(stmts)
	var last error
	for range len(c.nodes) {
		i := c.preferred()
		key := poolKey{c.nodes[i], LevelStrong}
		var wr []gorqlite.WriteResult
		a, err := c.call(ctx, key, func(ctx context.Context, conn *gorqlite.Connection) error {
			var err error
			wr, err = conn.WriteParameterizedContext(ctx, ps)
			return err
		})
		if err == nil || statementErrors(a, err) {
			return writeResults(wr), nil
		}
		err = fmt.Errorf("execute on %s: %w", key.node, err)
		notSent := !a.wrote.Load() || notSentStatus(a.status.Load())
		if a.status.Load() == 0 || a.status.Load() == http.StatusServiceUnavailable {
			c.moveOn(i) // unreachable, or it knows no leader: try elsewhere next time
		}
		if !notSent {
			return nil, err // sent, and no answer we can trust: outcome unknown
		}
		last = notApplied(err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// Query implements Executor: one /db/query request at level. A read is
// tried on each node in turn until one answers.
func (c *Client) Query(ctx context.Context, level Level, stmts []Statement) ([]Result, error) {
	ps := parameterized(stmts)
	var last error
	for range len(c.nodes) {
		i := c.preferred()
		key := poolKey{c.nodes[i], level}
		var qr []gorqlite.QueryResult
		a, err := c.call(ctx, key, func(ctx context.Context, conn *gorqlite.Connection) error {
			var err error
			qr, err = conn.QueryParameterizedContext(ctx, ps)
			return err
		})
		if err == nil || statementErrors(a, err) {
			return queryResults(qr)
		}
		last = fmt.Errorf("query on %s: %w", key.node, err)
		if ctx.Err() != nil {
			break
		}
		c.moveOn(i)
	}
	return nil, last
}

// statementErrors reports whether err is only the statements' own errors
// in an answer that came back whole (HTTP 200).
func statementErrors(a *attempt, err error) bool {
	var se gorqlite.StatementErrors
	return a.status.Load() == http.StatusOK && errors.As(err, &se)
}

func parameterized(stmts []Statement) []gorqlite.ParameterizedStatement {
	ps := make([]gorqlite.ParameterizedStatement, len(stmts))
	for i, s := range stmts {
		ps[i] = gorqlite.ParameterizedStatement{Query: s.SQL, Arguments: s.Args}
	}
	return ps
}

func writeResults(wr []gorqlite.WriteResult) []Result {
	out := make([]Result, len(wr))
	for i, w := range wr {
		out[i] = Result{Err: w.Err, RowsAffected: w.RowsAffected}
	}
	return out
}

func queryResults(qr []gorqlite.QueryResult) ([]Result, error) {
	out := make([]Result, len(qr))
	for i := range qr {
		q := &qr[i]
		out[i] = Result{Err: q.Err, Columns: q.Columns()}
		if q.Err != nil {
			continue
		}
		for q.Next() {
			row, err := q.Slice()
			if err != nil {
				return nil, fmt.Errorf("result %d row %d: %w", i, q.RowNumber(), err)
			}
			out[i].Rows = append(out[i].Rows, row)
		}
	}
	return out, nil
}
