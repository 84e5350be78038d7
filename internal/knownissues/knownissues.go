// Package knownissues is the catalogue of upstream bugs storecheck has
// confirmed in servers it did not change: each names the backend, the
// scenarios where it shows, the upstream report, and the signature that
// marks a failed run as caused by it. Reports show the issue beside the
// FAIL; a gate may accept it (--accept-known), so it stays visible without
// blocking. A run matches only with the signature in its own evidence: a
// FAIL for another reason is never hidden behind a known issue.
package knownissues

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/raftlog"
	"github.com/storecheck/storecheck/evidence"
)

// Issue is one confirmed upstream bug.
type Issue struct {
	// ID names the issue in reports and in docs/KNOWN-ISSUES.md.
	ID string
	// Title says what breaks, in one line.
	Title string
	// Scheme is the backend URL scheme it shows on.
	Scheme string
	// Scenarios are where it shows; none means any.
	Scenarios []string
	// Signature is text that an operation of the run's history carries
	// (an error the server returned) when the bug struck, or, with
	// EvidenceSuffix set, text that a file of the run folder whose name
	// ends so carries (evidence storecheck took from the server while the
	// run went on).
	Signature string
	// EvidenceSuffix names the evidence files Signature is looked for
	// in; "" for the histories.
	EvidenceSuffix string
	// MinCount is how many times Signature must occur in one file (at
	// least once when zero).
	MinCount int
	// Guarantees are the broken guarantees the bug can cause; a FAIL
	// naming another is not explained by it.
	Guarantees []string
	// Explains, when set, is asked of every violations.txt under the run
	// folder (one line per violation the checks found): the issue
	// explains the FAIL only when it accepts them all. It is for a bug
	// whose evidence says it struck but not which operations it touched:
	// the shape of the violations then has to be the one the bug makes,
	// so that another bug in the same run is not hidden behind it.
	Explains func(violations []string) bool
	// Upstream is the upstream report; Doc the section of
	// docs/KNOWN-ISSUES.md with the evidence and the reproduction.
	Upstream, Doc string
}

// All returns the catalogue.
func All() []Issue {
	return []Issue{{
		ID:     "libsql-delegated-txn-autocommit",
		Title:  "libSQL embedded replica: once sqld drops a delegated transaction (primary restart, 5 s lock steal, 30 s idle), the client's next statements run as autocommit and only COMMIT fails: a partial commit",
		Scheme: "libsql+replica",
		// What the client's COMMIT says when its transaction was already
		// gone on the primary.
		Signature:  "connection has reached an invalid state, started with Init",
		Guarantees: []string{"linearizability", "atomicity", "delivery order", "duplicate delivery", "lost delivery", "replica read", "phantom"},
		Upstream:   "https://github.com/tursodatabase/libsql/issues/1334",
		Doc:        "docs/KNOWN-ISSUES.md#libsql-delegated-txn-autocommit",
	}, {
		ID:     "sqld-write-lock-spin",
		Title:  "sqld: writers queued for the write lock loop in its hand-off (ManagedConnectionWalWrapper::acquire) using every core while nothing is served, for tens of seconds",
		Scheme: "libsql+replica",
		// The thread dump the sqld spin watch took while sqld used more
		// than a core for 20 s (backends/libsql/sqld/spinwatch.go): two or
		// more threads in the write-lock hand-off.
		Signature:      "ManagedConnectionWalWrapper",
		EvidenceSuffix: ".spin.txt",
		MinCount:       2,
		// While it spins nothing is served: the heal's reads and the
		// replicas' syncs go unanswered. A stall alone cannot make a
		// history unsafe, so only these two liveness checks are
		// explained by it (the partial commits that abandoned
		// transactions then meet are the issue above, with its own
		// signature).
		Guarantees: []string{"availability", "replica convergence"},
		Upstream:   "https://github.com/tursodatabase/libsql/issues/2203",
		Doc:        "docs/KNOWN-ISSUES.md#sqld-write-lock-spin",
	}, {
		ID: "raft-heartbeat-term-race",
		Title: "rqlite (hashicorp/raft, seen with v1.6.0, v1.7.1 and v1.7.3): a heartbeat from a new leader, handled on the transport's goroutine, raises the term while the deposed leader's loop " +
			"stamps queued commands with it; nodes then hold different entries at the same index and term, and their tables diverge",
		Scheme: "rqlite+process",
		// The comparison of the nodes' Raft logs storecheck keeps when
		// their tables or their logs disagree at the end of a fault run
		// (scenarios.inspectNodes): an index where two nodes hold
		// different entries of one term.
		Signature:      raftlog.BrokenMatching,
		EvidenceSuffix: "raftlog.txt",
		// The logs themselves (log matching, checked after every run on a
		// cluster of processes); a node that applied other commands misses
		// acknowledged writes or differs from the others; read through it,
		// the heal's reads miss an acknowledged commit. A stale read during
		// the run is not explained by it (at level weak that is the run's
		// own finding).
		Guarantees: []string{"log matching", "durability", "convergence", "lost update"},
		Upstream:   "https://github.com/hashicorp/raft/issues/695",
		Doc:        "docs/KNOWN-ISSUES.md#raft-heartbeat-term-race",
	}, {
		ID: "rqlite-fast-restart-unrestored-snapshot",
		Title: "rqlite (df4edc42, v10.2.7+23): a node killed after it installed a leader's snapshot but before its database was restored from it restarts on the fast path, " +
			"takes the snapshot's index as applied over a database that never held it, and misses the rows committed up to it for good",
		Scheme: "rqlite+process",
		// The restarts scenarios.keepUnrestored found in the nodes' own
		// logs: a life that ended after "copied to local snapshot" with no
		// restore after it, and the next life's fast path.
		Signature:      cluster.UnrestoredInstall,
		EvidenceSuffix: "unrestored-installs.txt",
		// A node missing committed rows differs from the others and lacks
		// acknowledged versions; once it leads (a step-down, an election),
		// the clients read and write through its state, and any check of
		// the history can break. Log Matching cannot: its Raft log is whole.
		Guarantees: []string{"durability", "convergence", "lost update", "linearizability", "stale read", "trace ring",
			"atomicity", "effect-once", "duplicate delivery", "lost delivery", "delivery order", "phantom write", "timers"},
		Upstream: "https://github.com/rqlite/rqlite/issues/2747",
		Doc:      "docs/KNOWN-ISSUES.md#rqlite-fast-restart-unrestored-snapshot",
	}, {
		ID: "rqlite-unrestored-snapshot-reap-malformed",
		Title: "rqlite (df4edc42, v10.2.7+23): after a fast restart over a snapshot it installed but never restored (rqlite#2747), a node's snapshot store reaps its own WAL into that snapshot's database, " +
			"which its database never was; SQLite finds the result malformed, and a node whose reap plan is interrupted then cannot open its store again",
		Scheme: "rqlite+process",
		// The node lives scenarios.keepUnrestored found refused at start
		// (the interrupted reap plan re-executed over the malformed
		// database), after a fast restart over an unrestored install in an
		// earlier life of the same node.
		Signature:      cluster.MalformedSnapshotStore,
		EvidenceSuffix: "snapshot-store-reaps.txt",
		// A node that cannot start does not come back after the heal; that
		// is all it explains (what its missing rows break is the issue
		// above, with its own signature).
		Guarantees: []string{"recovery"},
		Upstream:   "https://github.com/rqlite/rqlite/issues/2747",
		Doc:        "docs/KNOWN-ISSUES.md#rqlite-unrestored-snapshot-reap-malformed",
	}, {
		ID: "rqlite-forwarded-write-resent",
		Title: "rqlite (df4edc42, v10.2.7+23, since 079783be; 8.16–8.17 as rqlite#1628): a follower whose forwarded write got no answer within the request's timeout= sends it to the leader again, " +
			"on a new connection, even with retries=0; the leader applies both, and the client is told of an error, or of a conflict for a write that was applied",
		Scheme:    "rqlite+process",
		Scenarios: []string{"leader-pause"},
		// What leader-pause keeps of the follower's own counters
		// (scenarios.keepForwardStats): written only when it sent a
		// forwarded write again.
		Signature:      cluster.ResentSignature,
		EvidenceSuffix: "forwarding.txt",
		// A commit applied twice: the first copy wins its CAS, the second
		// loses it and is what the client hears (a conflict for a write
		// that was applied: atomicity, linearizability); its side-writes
		// are guarded by the same CAS, so nothing else is written twice.
		// Those checks' lines, for the executions of such commits only,
		// are all it explains (onlyWritesAppliedTwice): the evidence
		// says the follower re-sent writes, not which.
		Guarantees: []string{"atomicity", "linearizability", "trace ring"},
		Explains:   onlyWritesAppliedTwice,
		Upstream:   "https://github.com/rqlite/rqlite/commit/079783be",
		Doc:        "docs/KNOWN-ISSUES.md#rqlite-forwarded-write-resent",
	}}
}

// Match returns the known issue that explains a run of scenario on a
// backend of scheme that failed guarantee, whose evidence is in folder, or
// nil.
func Match(scheme, scenario, guarantee, folder string) *Issue {
	for _, is := range All() {
		if is.appliesTo(scheme, scenario) && slices.Contains(is.Guarantees, guarantee) && folder != "" && carries(folder, is) && explains(folder, is) {
			return &is
		}
	}
	return nil
}

// appliesTo says whether the issue shows on runs of scenario on a backend
// of scheme.
func (is Issue) appliesTo(scheme, scenario string) bool {
	return is.Scheme == scheme && (len(is.Scenarios) == 0 || slices.Contains(is.Scenarios, scenario))
}

// Struck returns the known issue of scheme whose signature the evidence in
// folder carries, whatever guarantee the run broke, or nil. Reports use
// Match, which also asks that the issue can explain the broken guarantee;
// Struck is for a test that asserts a correct server passes, which cannot
// say so of a run the server's own bug struck.
func Struck(scheme, scenario, folder string) *Issue {
	for _, is := range All() {
		if is.appliesTo(scheme, scenario) && folder != "" && carries(folder, is) {
			return &is
		}
	}
	return nil
}

// Lookup returns the issue with id, or nil.
func Lookup(id string) *Issue {
	for _, is := range All() {
		if is.ID == id {
			return &is
		}
	}
	return nil
}

// carries reports whether a file under folder that the issue's signature
// is looked for in (history.jsonl, or its evidence files) holds it at
// least MinCount times.
func carries(folder string, is Issue) bool {
	suffix, least := "history.jsonl", max(is.MinCount, 1)
	if is.EvidenceSuffix != "" {
		suffix = is.EvidenceSuffix
	}
	found := false
	_ = filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(path, suffix) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Count(b, []byte(is.Signature)) >= least {
			found = true
		}
		return nil
	})
	return found
}

// explains reports whether the issue's Explains accepts the violations of
// every violations.txt under folder (true without Explains). A FAIL whose
// violations were not written down is not explained by an issue that asks
// for them.
func explains(folder string, is Issue) bool {
	if is.Explains == nil {
		return true
	}
	read, ok := 0, true
	_ = filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !ok || d.IsDir() || filepath.Base(path) != evidence.ViolationsFile {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			ok = false
			return nil
		}
		read++
		ok = is.Explains(violationLines(string(b)))
		return nil
	})
	return ok && read > 0
}

// violationLines returns the lines of a violations.txt that state a broken
// guarantee: not its verdict line, its notes or the blank lines.
func violationLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "verdict:") || strings.HasPrefix(line, "note:") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// A write applied twice, the first copy winning its compare-and-swap and
// the second, whose answer the client hears, losing it: the atomicity
// check's line for a commit that returned a conflict though its write is in
// the chain of winners (linearizability.checkOutcome), and, for the same
// executions only, the lines of the checks that a conflict for a write
// that took effect defeats: no linearization of the execution's register,
// nor of its trace ring (the commit's trace entries are there).
var (
	conflictButApplied = regexp.MustCompile(`^atomicity: (?:commit|save) \S+ \((\S+) v\d+→\d+\) returned a conflict but its write is v\d+ of the chain$`)
	noLinearization    = regexp.MustCompile(`^(?:linearizability: execution (\S+): no linearization of its register operations exists|trace ring: execution (\S+): no linearization of its trace appends and reads exists)`)
)

// onlyWritesAppliedTwice accepts violations that are all of the shape a
// write applied twice makes, at least one of them a commit that returned a
// conflict though it won.
func onlyWritesAppliedTwice(violations []string) bool {
	applied := map[string]bool{}
	for _, v := range violations {
		if m := conflictButApplied.FindStringSubmatch(v); m != nil {
			applied[m[1]] = true
		}
	}
	if len(applied) == 0 {
		return false
	}
	for _, v := range violations {
		if conflictButApplied.MatchString(v) {
			continue
		}
		if m := noLinearization.FindStringSubmatch(v); m != nil && applied[m[1]+m[2]] {
			continue
		}
		return false
	}
	return true
}
