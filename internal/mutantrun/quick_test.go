package mutantrun

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// quickConformance is the conformance scenario with minimisation bounded by
// shrink. scenarios.Params has no shrink time (the real scenario always
// minimises for up to 30 s, which is most of a mutant's run), so the tests,
// which must stay CI-sized, run the same property through conformance.Check
// with a bound and map the report as scenarios/conformance.go does.
func quickConformance(shrink time.Duration) scenarios.Scenario {
	return scenarios.Scenario{
		Name:    "conformance",
		Summary: "the conformance property, minimisation bounded for tests",
		Run: func(ctx context.Context, t scenarios.Target, p scenarios.Params) scenarios.Result {
			rep, err := conformance.Check(ctx, t.Open, conformance.CheckConfig{Seed: p.Seed, Checks: p.Checks, Steps: p.Steps, ShrinkTime: shrink})
			res := scenarios.Result{Ops: rep.Ops, Cases: rep.Cases}
			switch {
			case err != nil && errors.Is(err, context.Canceled):
				res.Verdict, res.Reason = reports.Interrupted, "interrupted"
			case err != nil:
				res.Verdict, res.Reason = reports.NotRun, err.Error()
			case rep.Passed:
				res.Verdict = reports.Pass
			default:
				res.Verdict, res.Guarantee = reports.Fail, "model conformance"
				res.Reason = strings.TrimPrefix(rep.Failure, "[rapid] ")
				res.MinimalSteps = rep.MinimalSteps
			}
			return res
		},
	}
}

// concurrentScenario is the real concurrent scenario.
func concurrentScenario() scenarios.Scenario {
	sc, err := scenarios.Lookup("concurrent")
	if err != nil {
		panic(err)
	}
	return sc
}
