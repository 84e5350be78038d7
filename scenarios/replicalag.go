package scenarios

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/replicalag"
	"github.com/storecheck/storecheck/reports"
)

// replicaLagScenario measures replica lag (property 10): clients load from
// their own replica and commit on the primary, retrying conflicts, at every
// lag of a sweep up to the backend URL's, then under replica faults. It
// checks that commits stay linearizable, that no update is lost, that
// replica reads are committed, monotonic and read-your-writes, and that the
// replicas converge; it reports the conflict rate, the spurious-conflict
// rate, retries per commit and the worst staleness per lag.
func replicaLagScenario() Scenario {
	return Scenario{
		Name:   "replica-lag-conflict",
		Length: 4 * time.Second,
		Summary: "clients load from their own replica, commit on the primary and retry conflicts, at each lag of a sweep up to the URL's and under replica faults; " +
			"no lost update, commits linearizable, replica reads monotonic, read-your-writes and never part of a commit, replicas converge; conflict rate, retries and staleness per lag (lagsim: is a simulation)",
		Needs: []backends.Capability{backends.ExecutionStore, backends.Replicas},
		Cores: replicaLagCores,
		Run:   runReplicaLag,
		Knobs: func(p Params) error {
			return replicalag.Config{Clients: p.Clients, Executions: p.Executions, Updates: p.Ops, LevelTime: p.Duration}.Validate()
		},
	}
}

// replicaLagCores: on the simulation the sweep waits out its lags and
// fault windows more than it works, 1.5–2.1 s of CPU in 3.6–4.0 s
// (docs/PERFORMANCE.md); real replicas count as their target does.
func replicaLagCores(t *backends.Target) float64 {
	if t.SimulatesReplicas() {
		return 0.6
	}
	return t.Cores
}

func runReplicaLag(ctx context.Context, t Target, p Params) Result {
	target, err := t.Replicas(ctx, folder(p).LogDir())
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: flatReason(err.Error())}
	}
	if target.Close != nil {
		defer func() {
			if err := target.Close(); err != nil && p.Logger != nil {
				p.Logger.Warn("could not stop the server the run started", "err", err)
			}
		}()
	}
	cfg := replicalag.Config{
		Clients: p.Clients, Executions: p.Executions, Updates: p.Ops, LevelTime: p.Duration,
		Seed: p.Seed, Faults: true, OutDir: p.OutDir, Store: reports.Redact(t.URL),
	}
	if p.Progress != nil {
		cfg.Progress = &p.Progress.Ops
	}
	res, err := replicalag.Run(ctx, target, cfg)
	switch {
	case err != nil && ctx.Err() != nil:
		return Result{Verdict: reports.Interrupted, Reason: "interrupted during the sweep"}
	case err != nil && replicalag.IsNotOpened(err):
		return Result{Verdict: reports.NotRun, Reason: flatReason(err.Error())}
	case err != nil:
		return Result{Verdict: reports.NotRun, Reason: flatReason("the sweep could not run: " + err.Error())}
	}
	out := Result{Metrics: res.Metrics(), Digest: res.Digest, Reason: sweepLine(res), Servers: target.Servers}
	for _, lr := range append(res.Levels, res.Faults) {
		if lr != nil {
			out.Ops += int64(lr.Attempts + lr.Reads)
		}
	}
	switch res.Verdict {
	case linearizability.Ok:
		out.Verdict = reports.Pass
		faultPhaseUnchecked(&out, res)
	case linearizability.Unknown:
		out.Verdict, out.Reason = reports.Fail, res.Reason+" — verdict unknown; "+out.Reason
	default:
		out.Verdict, out.Guarantee = reports.Fail, res.Guarantee
		out.Reason = flatReason(res.Reason) + " — " + out.Reason
	}
	return out
}

// faultPhaseUnchecked turns a PASS into NOT RUN when the sweep's fault
// phase injected none of its faults (every injection failed): the lag
// sweep passed, but the replicas were never stalled, cut or killed, which
// the scenario claims to have tried.
func faultPhaseUnchecked(out *Result, res *replicalag.Result) {
	if res.Faults == nil {
		return
	}
	if why := whyNoFault(res.Faults.Faults, "none was planned"); why != "" {
		out.Verdict = reports.NotRun
		out.Reason = "the fault phase injected no fault: " + why + "; the lag sweep alone: " + out.Reason
	}
}

// sweepLine sums a sweep up in one line: what ran (a simulation or real
// replicas) and the conflict rate and worst staleness per lag.
func sweepLine(res *replicalag.Result) string {
	var parts []string
	for _, lr := range res.Levels {
		parts = append(parts, fmt.Sprintf("%s conflicts %.2f (spurious %.2f) worst staleness %.0fms",
			strings.TrimPrefix(lr.Name, "lag_"), lr.ConflictRate(), lr.SpuriousRate(), float64(lr.MaxStaleness.Milliseconds())))
	}
	what := "real libSQL embedded replicas"
	if res.Simulation {
		what = "simulation (lagsim, not libSQL)"
	}
	lost := int(res.Metrics()["lost_updates"])
	return fmt.Sprintf("%s: %s; %d lost updates; see %s", what, strings.Join(parts, "; "), lost, evidence.SweepMDFile)
}

// flatReason folds a message onto one line.
func flatReason(s string) string { return strings.Join(strings.Fields(s), " ") }
