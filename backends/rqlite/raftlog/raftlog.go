// Package raftlog reads the Raft log an rqlite node keeps on disk (raft.db,
// the bbolt file raft-boltdb writes) and compares the logs of a cluster's
// nodes. Raft's Log Matching property says two logs holding an entry with
// the same index and term hold the same entry there; nodes whose files break
// it have applied different commands at the same position, whatever their
// tables then show. Since a term's leader logs a no-op first, a log that
// opens a term with anything else breaks it too, against the leader's log,
// even once the others no longer hold the index (FindUnled). storecheck
// reads the files of nodes it has killed, after every fault run on a
// cluster of processes (scenarios.inspectNodes).
package raftlog

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Entry is one log entry: where it sits and what it carries.
type Entry struct {
	Index, Term uint64
	// Type is hashicorp/raft's LogType: 0 a command, 1 a no-op a new leader
	// writes, 5 a configuration, …
	Type uint8
	Data []byte
}

// Entry types named in reports.
const (
	typeCommand = 0
	typeNoop    = 1
	typeBarrier = 4
	typeConfig  = 5
)

// logsBucket is raft-boltdb's bucket of entries, keyed by index (8 bytes,
// big-endian), each value a msgpack map of hashicorp/raft's Log.
var logsBucket = []byte("logs")

// openTimeout bounds waiting for the file's lock: the node that wrote it
// must be gone.
const openTimeout = 5 * time.Second

// Read returns the entries of the raft.db at path, in index order. The
// file is opened read-only; its node must not be running.
func Read(path string) ([]Entry, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		return nil, fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	defer db.Close()
	var out []Entry
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(logsBucket)
		if b == nil {
			return errors.New("no logs bucket (not a raft-boltdb file)")
		}
		return b.ForEach(func(k, v []byte) error {
			e, err := decodeLog(v)
			if err != nil {
				return fmt.Errorf("entry %x: %w", k, err)
			}
			if len(k) != 8 || binary.BigEndian.Uint64(k) != e.Index {
				return fmt.Errorf("entry under key %x says index %d", k, e.Index)
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("raftlog: read %s: %w", path, err)
	}
	return out, nil
}

// Mismatch is an index where two nodes hold different entries.
type Mismatch struct {
	Index uint64
	// SameTerm says the differing entries carry the same term: Log
	// Matching is broken. Otherwise a node kept an entry of another term at
	// an index every node holds.
	SameTerm bool
	// Held says, per node, what it holds there (Describe).
	Held map[string]string
}

// Compare returns the indexes that more than one node holds where the
// nodes' entries differ, in index order.
func Compare(logs map[string][]Entry) []Mismatch {
	ms, _ := compare(logs)
	return ms
}

// compare is Compare, and how many indexes more than one node holds.
func compare(logs map[string][]Entry) (out []Mismatch, shared int) {
	byIndex := map[uint64]map[string]Entry{}
	for node, entries := range logs {
		for _, e := range entries {
			if byIndex[e.Index] == nil {
				byIndex[e.Index] = map[string]Entry{}
			}
			byIndex[e.Index][node] = e
		}
	}
	for idx, held := range byIndex {
		if len(held) < 2 {
			continue
		}
		shared++
		if agree(held) {
			continue
		}
		m := Mismatch{Index: idx, SameTerm: true, Held: map[string]string{}}
		var term uint64
		first := true
		for node, e := range held {
			m.Held[node] = Describe(e)
			if !first && e.Term != term {
				m.SameTerm = false
			}
			term, first = e.Term, false
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Mismatch) int { return cmpUint(a.Index, b.Index) })
	return out, shared
}

// agree says whether every node holds the same entry. Configuration
// entries of one term count as the same whatever their bytes: each node of
// a cluster started with -bootstrap-expect writes the first configuration
// itself, listing the same servers in its own order (seen on rqlited
// v10.2.7: index 1 differs in bytes on every node of a healthy cluster).
func agree(held map[string]Entry) bool {
	var ref *Entry
	for _, e := range held {
		if ref == nil {
			ref = &e
			continue
		}
		if e.Term != ref.Term || e.Type != ref.Type {
			return false
		}
		if e.Type != typeConfig && string(e.Data) != string(ref.Data) {
			return false
		}
	}
	return true
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Describe names an entry in a line: its term, its type and, for a
// command, a digest of its data and the first SQL text in it.
func Describe(e Entry) string {
	switch e.Type {
	case typeNoop:
		return fmt.Sprintf("term %d no-op", e.Term)
	case typeBarrier:
		return fmt.Sprintf("term %d barrier", e.Term)
	case typeConfig:
		return fmt.Sprintf("term %d configuration", e.Term)
	case typeCommand:
		sum := sha256.Sum256(e.Data)
		return fmt.Sprintf("term %d command %x %q", e.Term, sum[:6], firstSQL(e.Data))
	}
	return fmt.Sprintf("term %d type %d (%d bytes)", e.Term, e.Type, len(e.Data))
}

// firstSQL finds the first SQL keyword in a command's bytes (rqlite's
// protobuf carries statements as text) and returns up to 80 characters
// from it, or "".
func firstSQL(data []byte) string {
	s := string(data)
	at := -1
	for _, kw := range []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE"} {
		if i := strings.Index(s, kw); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	s = s[at:]
	end := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
	if end >= 0 {
		s = s[:end]
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// BrokenMatching opens the line of a report that names an index where Log
// Matching is broken; the known issue it shows is recognised by it
// (internal/knownissues).
const BrokenMatching = "Log Matching broken"

// Comparison is what Report found.
type Comparison struct {
	// Text says it, one line per node and one per index where the nodes
	// differ.
	Text string
	// Broken are the indexes where Log Matching is broken (the same term,
	// different entries).
	Broken []Mismatch
	// Unled are the entries that open a term in one node's log without
	// being that term's leader's first entry (Unled): Log Matching broken
	// against the leader's log, even where no other log still holds the
	// index.
	Unled []Unled
	// Shared is how many indexes more than one readable log holds: what
	// was compared.
	Shared int
	// Unread are the nodes whose log could not be read.
	Unread []string
}

// Report reads the raft.db of each node under dir (dir/ID/raft.db, from
// nodes that are not running) and compares them.
func Report(dir string, ids []string) Comparison {
	var c Comparison
	var b strings.Builder
	b.WriteString("Raft logs read from each node's raft.db after the nodes were killed\n")
	logs := map[string][]Entry{}
	for _, id := range ids {
		entries, err := Read(filepath.Join(dir, id, "raft.db"))
		switch {
		case err != nil:
			fmt.Fprintf(&b, "%s: %v\n", id, err)
			c.Unread = append(c.Unread, id)
			continue
		case len(entries) == 0:
			fmt.Fprintf(&b, "%s: no entries\n", id)
		default:
			fmt.Fprintf(&b, "%s: %d entries, indexes %d..%d\n", id, len(entries), entries[0].Index, entries[len(entries)-1].Index)
		}
		logs[id] = entries
	}
	var ms []Mismatch
	ms, c.Shared = compare(logs)
	fmt.Fprintf(&b, "%d indexes held by more than one log compared\n", c.Shared)
	if len(ms) == 0 {
		fmt.Fprintf(&b, "every index that more than one of these logs holds holds the same entry in each\n")
	}
	for _, m := range ms {
		what := "different entries, of different terms"
		if m.SameTerm {
			what = BrokenMatching + ": the same term, different entries"
			c.Broken = append(c.Broken, m)
		}
		fmt.Fprintf(&b, "index %d: %s: %s\n", m.Index, what, m.held())
	}
	for _, id := range ids {
		c.Unled = append(c.Unled, FindUnled(id, logs[id])...)
	}
	for _, u := range c.Unled {
		fmt.Fprintf(&b, "index %d: %s: %s\n", u.Index, BrokenMatching+" with the term's leader", u)
	}
	c.Text = b.String()
	return c
}

// Unled is an entry that opens a term in a node's log, right after an
// entry of an older term, and is not a no-op or a configuration.
// hashicorp/raft's leader logs a no-op first when it takes a term (its
// runLeader), and a follower takes a leader's entries in order, so the
// first entry of a term in any log is that no-op, unless a snapshot cut the
// log there; a command in its place was logged under a term its node did
// not lead, and the term's leader holds its no-op at that index: two
// entries of one term at one index. This is how the Log Matching break of
// hashicorp/raft#695 shows in the one log that still holds the index once
// the others have compacted it into a snapshot.
type Unled struct {
	Node                  string
	Index, Term, PrevTerm uint64
	Held                  string // Describe of the entry
}

func (u Unled) String() string {
	return fmt.Sprintf("%s's first entry of term %d is %s, after term %d at index %d, where the term's leader logs its no-op first",
		u.Node, u.Term, u.Held, u.PrevTerm, u.Index-1)
}

// FindUnled returns the entries of one node's log, in index order, that
// open a term without being its leader's first entry (Unled).
func FindUnled(node string, entries []Entry) []Unled {
	var out []Unled
	for i := 1; i < len(entries); i++ {
		prev, e := entries[i-1], entries[i]
		if e.Index != prev.Index+1 || e.Term <= prev.Term || e.Type == typeNoop || e.Type == typeConfig {
			continue
		}
		out = append(out, Unled{Node: node, Index: e.Index, Term: e.Term, PrevTerm: prev.Term, Held: Describe(e)})
	}
	return out
}

// Line says in one line where Log Matching is broken, for a reason: the
// first index where two logs differ in one term, or else the first entry
// that opens a term without being its leader's.
func (c Comparison) Line() string {
	at := map[uint64]bool{} // an index both checks name counts once
	for _, m := range c.Broken {
		at[m.Index] = true
	}
	for _, u := range c.Unled {
		at[u.Index] = true
	}
	n := len(at)
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more indexes)", n-1)
	}
	switch {
	case len(c.Broken) > 0:
		return fmt.Sprintf("the nodes' Raft logs hold different entries of one term at index %d: %s%s", c.Broken[0].Index, c.Broken[0].held(), more)
	case len(c.Unled) > 0:
		return fmt.Sprintf("at index %d %s%s", c.Unled[0].Index, c.Unled[0], more)
	}
	return ""
}

// Breaks says whether the comparison found Log Matching broken.
func (c Comparison) Breaks() bool { return len(c.Broken) > 0 || len(c.Unled) > 0 }

// held says what each node holds, nodes in name order.
func (m Mismatch) held() string {
	nodes := make([]string, 0, len(m.Held))
	for id := range m.Held {
		nodes = append(nodes, id)
	}
	slices.Sort(nodes)
	for i, id := range nodes {
		nodes[i] = id + " " + m.Held[id]
	}
	return strings.Join(nodes, "; ")
}
