package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/reports"
)

// TestTableNamesAKnownIssue: a FAIL the run's evidence puts down to a known
// upstream issue says which beneath its reason, so that a gate passed under
// --accept-known names what it accepted; a FAIL without one says nothing of
// the kind.
func TestTableNamesAKnownIssue(t *testing.T) {
	s := &reports.Summary{Runs: []reports.Run{
		{Backend: "rqlite+process:", Scenario: "leader-pause", Verdict: reports.Fail, Reason: "atomicity: …", KnownIssue: "rqlite-forwarded-write-resent", Reproduce: "storecheck run …"},
		{Backend: "sqlite:x.db", Scenario: "conformance", Verdict: reports.Fail, Reason: "lost update", Reproduce: "storecheck run …"},
	}}
	var b bytes.Buffer
	printTable(&b, s)
	out := b.String()
	if !strings.Contains(out, "known upstream issue: rqlite-forwarded-write-resent (docs/KNOWN-ISSUES.md#rqlite-forwarded-write-resent)") {
		t.Errorf("the known issue is not named:\n%s", out)
	}
	if strings.Count(out, "known upstream issue") != 1 {
		t.Errorf("want one known-issue line, for the one run that has one:\n%s", out)
	}
}
