package rqlite

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Level is rqlite's read consistency level.
type Level string

// The read levels rqlite offers.
const (
	// LevelNone reads the local SQLite of whichever node is asked: fast, and
	// stale on a follower that has fallen behind or been cut off.
	LevelNone Level = "none"
	// LevelWeak asks the node that believes it leads, without checking it
	// still does: stale for a deposed leader.
	LevelWeak Level = "weak"
	// LevelLinearizable checks leadership with a heartbeat round before
	// reading.
	LevelLinearizable Level = "linearizable"
	// LevelStrong sends the read through the Raft log: the seed's default.
	LevelStrong Level = "strong"
)

// Levels returns every level, weakest first.
func Levels() []Level { return []Level{LevelNone, LevelWeak, LevelLinearizable, LevelStrong} }

// ParseLevel reads a level name.
func ParseLevel(s string) (Level, error) {
	for _, l := range Levels() {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown read level %q (want none, weak, linearizable or strong)", s)
}

// Options configure a Store.
type Options struct {
	// Nodes are the HTTP addresses (host:port) of the cluster's nodes; the
	// store starts with the first and moves on when one cannot be reached.
	Nodes []string
	// Level is the read consistency level; "" means LevelStrong.
	Level Level
	// Guard ties a commit's side-writes to its CAS; "" means
	// GuardPreState, the one that keeps the contract (GuardData, the
	// seed's, lets a byte-identical stale commit write its side-writes).
	Guard Guard
	// RequestTimeout bounds one HTTP request when the caller's context has
	// no earlier deadline; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ConnectTimeout bounds Open's wait for a cluster with a leader; 0
	// means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// ServerTimeout, when set, is sent with every request as rqlite's own
	// timeout= parameter: how long the node that takes the request waits
	// for the leader it forwards the request to (and a leader for its
	// commit); 0 sends none, and rqlite waits its default (30 s). A short
	// one makes a follower give up on a leader that answers late.
	ServerTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultRequestTimeout = 10 * time.Second
	DefaultConnectTimeout = 30 * time.Second
)

// normalize fills defaults and rejects what cannot work.
func (o Options) normalize() (Options, error) {
	if len(o.Nodes) == 0 {
		return o, fmt.Errorf("no node address")
	}
	for _, n := range o.Nodes {
		if err := checkHostPort(n); err != nil {
			return o, err
		}
	}
	if o.Level == "" {
		o.Level = LevelStrong
	}
	if _, err := ParseLevel(string(o.Level)); err != nil {
		return o, err
	}
	if o.Guard == "" {
		o.Guard = GuardPreState
	}
	if _, err := ParseGuard(string(o.Guard)); err != nil {
		return o, err
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.RequestTimeout < 0 || o.ConnectTimeout < 0 || o.ServerTimeout < 0 {
		return o, fmt.Errorf("timeouts must not be negative")
	}
	return o, nil
}

func checkHostPort(n string) error {
	host, port, err := net.SplitHostPort(n)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("node address %q is not host:port", n)
	}
	// A port no node can have would be found only after the connect
	// timeout, as no leader.
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("node address %q: port %q is not a TCP port (1..65535)", n, port)
	}
	return nil
}

// ParseURL reads the part of a backend URL after "rqlite:":
// //HOST:PORT[,HOST:PORT…][?level=L&guard=G&timeout=D&connect_timeout=D&server_timeout=D]. User
// information in the URL is refused: credentials come from the environment.
func ParseURL(rest string) (Options, error) {
	if !strings.HasPrefix(rest, "//") {
		return Options{}, fmt.Errorf("rqlite: want rqlite://HOST:PORT[,HOST:PORT]…, got rqlite:%s", rest)
	}
	hosts, query, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
	hosts = strings.TrimSuffix(hosts, "/")
	if strings.Contains(hosts, "@") {
		return Options{}, fmt.Errorf("rqlite: credentials do not belong in the URL; set RQLITE_USERNAME and RQLITE_PASSWORD")
	}
	var o Options
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			o.Nodes = append(o.Nodes, h)
		}
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return Options{}, fmt.Errorf("rqlite: bad parameters: %w", err)
	}
	for k, v := range values {
		if len(v) != 1 {
			return Options{}, fmt.Errorf("rqlite: parameter %q repeated", k)
		}
		switch k {
		case "level":
			if o.Level, err = ParseLevel(v[0]); err != nil {
				return Options{}, fmt.Errorf("rqlite: %w", err)
			}
		case "guard":
			if o.Guard, err = ParseGuard(v[0]); err != nil {
				return Options{}, fmt.Errorf("rqlite: %w", err)
			}
		case "timeout":
			if o.RequestTimeout, err = positiveDuration(k, v[0]); err != nil {
				return Options{}, err
			}
		case "connect_timeout":
			if o.ConnectTimeout, err = positiveDuration(k, v[0]); err != nil {
				return Options{}, err
			}
		case "server_timeout":
			if o.ServerTimeout, err = positiveDuration(k, v[0]); err != nil {
				return Options{}, err
			}
		default:
			return Options{}, fmt.Errorf("rqlite: unknown parameter %q (known: level, guard, timeout, connect_timeout, server_timeout)", k)
		}
	}
	o, err = o.normalize()
	if err != nil {
		return Options{}, fmt.Errorf("rqlite: %w", err)
	}
	return o, nil
}

func positiveDuration(name, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("rqlite: %s must be a positive duration such as 5s, got %q", name, s)
	}
	return d, nil
}
