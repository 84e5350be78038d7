package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/replicalag"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload"
)

// concurrentScenario runs many clients at once against one store, records the
// history, and checks it: porcupine per execution (properties 2, 8) and the
// global checks (atomicity, no lost update, effect-once, delivery, timers).
func concurrentScenario() Scenario {
	return Scenario{
		Name:    "concurrent",
		Summary: "many clients at once; the history checked for linearizability with porcupine, plus atomicity, delivery, dedupe and timer checks (on replica backends each client reads from a replica of its own, held to the replica rules)",
		Needs:   []backends.Capability{backends.ExecutionStore},
		Run:     runConcurrent,
		Knobs: func(p Params) error {
			c := workload.Config{Clients: p.Clients, Executions: p.Executions, Ops: p.Ops, Duration: p.Duration}
			if p.Duration > 0 {
				c.Ops = 0 // as runConcurrent: the duration bounds the run
			}
			return c.Validate()
		},
	}
}

func runConcurrent(ctx context.Context, t Target, p Params) Result {
	cfg := model.DefaultConfig()
	store, replicas, srv, closeAll, err := openConcurrent(ctx, t, p, cfg)
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("backend could not be opened: %s", flatReason(err.Error()))}
	}
	defer func() {
		if err := closeAll(); err != nil && p.Logger != nil {
			p.Logger.Warn("could not close the backend", "err", err)
		}
	}()
	if r, ok := store.(model.Resetter); ok {
		if err := r.Reset(ctx); err != nil {
			if out, ok := brokeBeforeTraffic(store, srv); ok && ctx.Err() == nil {
				return out
			}
			return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("backend could not be emptied: %v", err)}
		}
	}
	wcfg := workload.Config{
		Clients: p.Clients, Executions: p.Executions, Ops: p.Ops, Duration: p.Duration, Seed: p.Seed,
		TraceMax: cfg.TraceMax, OutDir: p.OutDir, KeepArtifacts: true, Scenario: "concurrent", Store: reports.Redact(t.URL),
		Replicas: replicas,
	}
	if len(replicas) > 0 {
		// Every read_trace is served by a replica and held to the replica
		// rules, so the trace ring's linearization has almost no reads to
		// fix the order of standalone appends, and the search over their
		// orders ran past its 5 minutes in 7 of 10 lagsim soak runs. The
		// commits still append trace steps, in version order.
		wcfg.Mix = workload.DefaultMix()
		wcfg.Mix.AppendTrace = 0
	}
	if p.Duration > 0 {
		wcfg.Ops = 0 // the duration bounds the run
	}
	if p.Progress != nil {
		wcfg.Progress = &p.Progress.Ops
	}
	res, err := workload.Run(ctx, store, wcfg)
	if err != nil && ctx.Err() != nil {
		return Result{Verdict: reports.Interrupted, Reason: "interrupted during the workload"}
	}
	if out, ok := brokeBeforeTraffic(store, srv); ok && err != nil {
		// It broke checking that the store is empty.
		return out
	}
	switch {
	case err != nil && errors.Is(err, workload.ErrNotStarted):
		return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("workload could not start: %v", err)}
	case err != nil && res == nil:
		// Anything else mid-run (a client the recorder refused, a store
		// that broke its own protocol) is a failure: the run started and
		// could not be checked.
		return Result{Verdict: reports.Fail, Reason: fmt.Sprintf("the run could not be completed: %v", err)}
	}
	m := reports.Measure(res.History)
	out := Result{Ops: int64(res.Counts.Ops), Metrics: concurrentMetrics(res), Measured: &m, Servers: srv, Digest: res.PlanDigest}
	switch res.Verdict {
	case linearizability.Ok:
		out.Verdict = reports.Pass
	case linearizability.Unknown:
		// A checker that ran out of time proved nothing: never a pass.
		out.Verdict, out.Reason = reports.Fail, "the linearizability checker timed out: verdict unknown"
	default:
		out.Verdict, out.Guarantee = reports.Fail, res.Guarantee
		out.Reason = firstViolation(res)
	}
	notRecovered(&out, res)
	if res.Broken != nil {
		adapterBroken(&out, res.Broken)
	}
	return out
}

func concurrentMetrics(res *workload.Result) map[string]float64 {
	m := map[string]float64{
		"steps":         float64(res.Steps),
		"commits":       float64(res.Counts.Commits),
		"conflicts":     float64(res.Counts.Conflicts),
		"conflict_rate": res.Counts.ConflictRate,
		"indeterminate": float64(res.Counts.Indeterminate),
		"failed":        float64(res.Counts.Failed),
		"traffic_ms":    float64(res.TrafficTime.Milliseconds()),
		"checker_ms":    float64(res.CheckTime.Milliseconds()),
	}
	if s := res.TrafficTime.Seconds(); s > 0 {
		m["ops_per_sec"] = float64(res.Counts.Ops) / s
	}
	return m
}

// firstViolation is the one-line reason of a failed check.
func firstViolation(res *workload.Result) string {
	if res.Report != nil && len(res.Report.Violations) > 0 {
		line := res.Report.Violations[0].Error()
		if n := len(res.Report.Violations); n > 1 {
			line += fmt.Sprintf(" (and %d more)", n-1)
		}
		return strings.Join(strings.Fields(line), " ")
	}
	if res.Err != nil {
		return res.Err.Error()
	}
	return "history is not linearizable"
}

// openConcurrent opens the store the clients share; on a replica backend
// (lagsim:, libsql+replica:) that is the primary, and every client gets a
// replica of its own, syncing at the URL's interval.
func openConcurrent(ctx context.Context, t Target, p Params, cfg model.Config) (model.Store, []linearizability.Replica, []string, func() error, error) {
	if !t.Has(backends.Replicas) {
		store, err := t.opener(p)(ctx, cfg)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return store, nil, servers(store), store.Close, nil
	}
	target, err := t.Replicas(ctx, folder(p).LogDir())
	if err != nil {
		return nil, nil, nil, nil, err
	}
	closeTarget := func() error {
		if target.Close != nil {
			return target.Close()
		}
		return nil
	}
	cl, err := target.Open(ctx, replicalag.Level{Lag: target.Top, Label: "concurrent"}, p.Seed)
	if err != nil {
		return nil, nil, nil, nil, errors.Join(err, closeTarget())
	}
	closeAll := func() error { return errors.Join(cl.Close(), closeTarget()) }
	clients := p.Clients
	if clients == 0 {
		clients = workload.DefaultClients
	}
	replicas := make([]linearizability.Replica, clients)
	for i := range replicas {
		r, err := cl.NewReplica(ctx, fmt.Sprintf("r%d", i), uint64(i))
		if err != nil {
			return nil, nil, nil, nil, errors.Join(err, closeAll())
		}
		replicas[i] = r
	}
	return cl.Primary(), replicas, target.Servers, closeAll, nil
}

// GuaranteeAvailability is broken by a store that does not serve after
// the traffic and the faults' heals.
const GuaranteeAvailability = "availability"

// notRecovered makes a run whose store stopped answering during the
// traffic (for the workload's stall bound) or did not serve the final reads
// a FAIL (availability), keeping what the history recorded up to then
// showed besides: a stale read found there is still reported.
func notRecovered(out *Result, res *workload.Result) {
	var found []string
	for _, err := range []error{res.Stalled, res.NotRecovered} {
		if err != nil {
			found = append(found, err.Error())
		}
	}
	if len(found) == 0 {
		return
	}
	if res.Stalled != nil {
		if out.Metrics == nil {
			out.Metrics = map[string]float64{}
		}
		out.Metrics["traffic_stalled"] = 1
	}
	reason := fmt.Sprintf("%s: %s", GuaranteeAvailability, strings.Join(found, "; "))
	if out.Verdict == reports.Fail && out.Reason != "" {
		reason += "; the history up to then: " + out.Reason
	}
	out.Verdict, out.Guarantee, out.Reason = reports.Fail, GuaranteeAvailability, flatReason(reason)
}
