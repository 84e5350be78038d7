package runner

import (
	"context"
	"testing"

	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

type quiet struct{}

func (quiet) Started(string, string, *scenarios.Progress) {}
func (quiet) Finished(reports.Run)                        {}

// A scenario that claims success without running an operation is not a
// pass; one that ran something is.
func TestEmptyPassIsNotRun(t *testing.T) {
	sc := func(ops int64) scenarios.Scenario {
		return scenarios.Scenario{Name: "s", Run: func(context.Context, scenarios.Target, scenarios.Params) scenarios.Result {
			return scenarios.Result{Verdict: reports.Pass, Ops: ops}
		}}
	}
	for _, c := range []struct {
		ops  int64
		want reports.Verdict
	}{{0, reports.NotRun}, {1, reports.Pass}} {
		sum := Execute(context.Background(), Plan{
			Backends: []string{"memory:"}, Scenarios: []scenarios.Scenario{sc(c.ops)}, Out: t.TempDir(),
			Params: scenarios.Params{Seed: 1}, Reproduce: func(string, string) string { return "" },
		}, quiet{})
		if got := sum.Runs[0].Verdict; got != c.want {
			t.Errorf("ops=%d: verdict %s, want %s", c.ops, got, c.want)
		}
	}
}
