package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload"
)

// A run whose store stalled during the traffic, or did not serve the heal
// reads, is an availability FAIL that names what happened and keeps what
// the history showed; a run with neither is left as it was.
func TestNotRecoveredAndStalled(t *testing.T) {
	stalled := fmt.Errorf("%w within its 10s timeout from 3.0s to 64.0s of the traffic", workload.ErrStalled)
	healFailed := fmt.Errorf("%w within 30s: heal read 1 of 4: timeout", linearizability.ErrNotRecovered)
	cases := []struct {
		name    string
		res     workload.Result
		before  Result
		verdict reports.Verdict
		says    []string
	}{
		{"neither", workload.Result{}, Result{Verdict: reports.Pass}, reports.Pass, nil},
		{"stalled", workload.Result{Stalled: stalled}, Result{Verdict: reports.Pass}, reports.Fail, []string{"availability: the store answered no call", "64.0s"}},
		{"both, and a stale read", workload.Result{Stalled: stalled, NotRecovered: healFailed}, Result{Verdict: reports.Fail, Reason: "stale read of e1"},
			reports.Fail, []string{"answered no call", "did not serve the final reads", "the history up to then: stale read of e1"}},
	}
	for _, c := range cases {
		out := c.before
		notRecovered(&out, &c.res)
		if out.Verdict != c.verdict {
			t.Errorf("%s: verdict %s, want %s", c.name, out.Verdict, c.verdict)
		}
		for _, s := range c.says {
			if !strings.Contains(out.Reason, s) {
				t.Errorf("%s: reason %q does not say %q", c.name, out.Reason, s)
			}
		}
		if c.verdict == reports.Fail && out.Guarantee != GuaranteeAvailability {
			t.Errorf("%s: guarantee %q", c.name, out.Guarantee)
		}
		if got := out.Metrics["traffic_stalled"]; (c.res.Stalled != nil) != (got == 1) {
			t.Errorf("%s: traffic_stalled = %v", c.name, got)
		}
	}
}
