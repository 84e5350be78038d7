package scenarios

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
)

func defaultProbeConfig() model.Config { return model.DefaultConfig() }

// conformanceScenario runs the rapid state machine: random sequences over
// every operation against the backend and the reference model, results and
// all six tables compared after every step (property 1, model conformance).
func conformanceScenario() Scenario {
	return Scenario{
		Name:    "conformance",
		Summary: "random operation sequences against the reference model; results and all six tables compared after every step",
		Needs:   []backends.Capability{backends.ExecutionStore},
		Run:     runConformance,
	}
}

func runConformance(ctx context.Context, t Target, p Params) Result {
	srv, err := probe(ctx, t, p)
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("backend could not be opened: %v", err)}
	}
	var stats *conformance.Stats
	if p.Progress != nil {
		stats = &conformance.Stats{}
		stop := mirror(&stats.Ops, &p.Progress.Ops)
		defer stop()
	}
	rep, err := conformance.Check(ctx, t.opener(p), conformance.CheckConfig{Seed: p.Seed, Checks: p.Checks, Steps: p.Steps, ShrinkRuns: p.ShrinkRuns, ShrinkTime: p.ShrinkTime, Stats: stats})
	res := Result{Ops: rep.Ops, Cases: rep.Cases, Digest: rep.Digest, Servers: srv}
	keepLines(p, evidence.RapidLogFile, rep.Output)
	switch {
	case err != nil && ctx.Err() != nil:
		res.Verdict, res.Reason = reports.Interrupted, "interrupted before the property finished"
	case err != nil:
		res.Verdict, res.Reason = reports.NotRun, err.Error()
	case rep.Broken != nil:
		// The store broke for good (an adapter that broke its protocol):
		// the check stopped at the test case that broke it, unshrunk.
		adapterBroken(&res, rep.Broken)
		res.MinimalSteps = rep.MinimalSteps
	case rep.Passed:
		res.Verdict = reports.Pass
	default:
		res.Verdict = reports.Fail
		res.Guarantee = "model conformance"
		res.Reason = strings.TrimPrefix(rep.Failure, "[rapid] ")
		res.MinimalSteps = rep.MinimalSteps
		res.Metrics = minimisedMetrics(rep, conformance.StepCount(rep.MinimalSteps))
	}
	return res
}

// mirror copies src into dst every 100ms until stopped, and once more then.
func mirror(src, dst *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			dst.Store(src.Load())
			select {
			case <-done:
				dst.Store(src.Load())
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// minimisedMetrics are the figures of a conformance FAIL (either suite's):
// the minimal sequence's steps, and the shrink budget's use — any bound
// (ShrinkRuns) of at least minimal_at_run reports the same minimal sequence
// for this seed, and of at least shortest_at_run one as short.
func minimisedMetrics(rep conformance.Report, steps int) map[string]float64 {
	return map[string]float64{"minimal_steps": float64(steps),
		"shrink_runs": float64(rep.ShrinkRuns), "minimal_at_run": float64(rep.MinimalAt), "shortest_at_run": float64(rep.ShortestAt)}
}
