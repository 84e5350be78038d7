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
	"slices"
	"strings"
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
	// (an error the server returned) when the bug struck.
	Signature string
	// Guarantees are the broken guarantees the bug can cause; a FAIL
	// naming another is not explained by it.
	Guarantees []string
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
	}}
}

// Match returns the known issue that explains a run of scenario on a
// backend of scheme that failed guarantee, whose evidence is in folder, or
// nil.
func Match(scheme, scenario, guarantee, folder string) *Issue {
	for _, is := range All() {
		if is.Scheme != scheme || (len(is.Scenarios) > 0 && !slices.Contains(is.Scenarios, scenario)) ||
			!slices.Contains(is.Guarantees, guarantee) {
			continue
		}
		if folder != "" && inHistories(folder, is.Signature) {
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

// inHistories reports whether any history.jsonl under folder holds text.
func inHistories(folder, text string) bool {
	found := false
	_ = filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(path, "history.jsonl") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(text)) {
			found = true
		}
		return nil
	})
	return found
}
