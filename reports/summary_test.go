package reports

import "testing"

// A known issue's FAIL fails the exit code unless the gate accepts known
// issues; any other FAIL always does.
func TestExitCodeAcceptKnown(t *testing.T) {
	known := &Summary{Runs: []Run{{Verdict: Pass}, {Verdict: Fail, KnownIssue: "x"}}}
	other := &Summary{Runs: []Run{{Verdict: Fail, KnownIssue: "x"}, {Verdict: Fail}}}
	for _, c := range []struct {
		s      *Summary
		accept bool
		want   int
	}{{known, false, 1}, {known, true, 0}, {other, true, 1}} {
		if got := c.s.ExitCode(false, c.accept); got != c.want {
			t.Errorf("accept=%v: exit %d, want %d (%+v)", c.accept, got, c.want, c.s.Runs)
		}
	}
}
