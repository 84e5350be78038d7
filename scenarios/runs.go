package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	confrunstore "github.com/storecheck/storecheck/conformance/runstore"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload/leasestall"
)

// runStoreNeeds are what the run-store scenarios need.
func runStoreNeeds() []backends.Capability { return []backends.Capability{backends.RunStore} }

// openRuns opens the target's run store, emptied.
func openRuns(ctx context.Context, t Target) (runstore.Store, error) {
	s, err := t.OpenRuns(ctx)
	if err != nil {
		return nil, err
	}
	if r, ok := s.(runstore.Resetter); ok {
		if err := r.Reset(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("empty the run store: %w", err)
		}
	}
	return s, nil
}

// runsConformanceScenario runs the run-store state machine: random
// operation sequences on an injected clock against the backend and the
// reference model, results and all five tables compared after every step.
func runsConformanceScenario() Scenario {
	return Scenario{
		Name:    "runs-conformance",
		Summary: "run store: random operation sequences (leases, fencing tokens, interrupts) against the reference model; results and all five tables compared after every step",
		Needs:   runStoreNeeds(),
		Run:     runRunsConformance,
	}
}

func runRunsConformance(ctx context.Context, t Target, p Params) Result {
	probe, err := t.OpenRuns(ctx)
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("backend could not be opened: %v", err)}
	}
	probe.Close()
	var stats *confrunstore.Stats
	if p.Progress != nil {
		stats = &confrunstore.Stats{}
		stop := mirror(&stats.Ops, &p.Progress.Ops)
		defer stop()
	}
	open := func(ctx context.Context) (runstore.Store, error) { return t.OpenRuns(ctx) }
	rep, err := confrunstore.Check(ctx, open, confrunstore.CheckConfig{Seed: p.Seed, Checks: p.Checks, Steps: p.Steps, Stats: stats})
	res := Result{Ops: rep.Ops, Cases: rep.Cases, Digest: rep.Digest}
	keep(p, evidence.RapidLogFile, []byte(strings.Join(rep.Output, "\n")+"\n"))
	switch {
	case err != nil && ctx.Err() != nil:
		res.Verdict, res.Reason = reports.Interrupted, "interrupted before the property finished"
	case err != nil:
		res.Verdict, res.Reason = reports.NotRun, err.Error()
	case rep.Passed:
		res.Verdict = reports.Pass
	default:
		res.Verdict, res.Guarantee = reports.Fail, "run-store model conformance"
		res.Reason = strings.TrimPrefix(rep.Failure, "[rapid] ")
		res.MinimalSteps = rep.MinimalSteps
		res.Metrics = minimisedMetrics(rep, confrunstore.StepCount(rep.MinimalSteps))
	}
	return res
}

// leaseStallScenario runs the lease-stall workload (workload/leasestall):
// goroutine workers on an injected clock with a paused victim, then, when
// the backend is a file several processes can open, worker processes of
// this binary stalled with SIGSTOP.
func leaseStallScenario() Scenario {
	return Scenario{
		Name:    "lease-stall",
		Length:  3600 * time.Millisecond,
		Summary: "run store: workers claim, renew, checkpoint and finish while one stalls past its lease (paused goroutine, SIGSTOPped process) and another takes the run over; stale tokens must be rejected, one live lease per run (porcupine), tokens increasing, gap-free numbering, idempotent creates, claims by priority, expired runs requeued by the sweep, checkpoint gaps and stale versions refused, an interrupt ending the holder's lease, decided once, timing its run out when overdue",
		Needs:   runStoreNeeds(),
		// It waits out leases: 0.95 s of CPU in 3.6 s on runs+sqlite
		// (docs/PERFORMANCE.md).
		Cores: func(t *backends.Target) float64 { return 0.3 * t.Cores },
		Run:   runLeaseStall,
	}
}

func runLeaseStall(ctx context.Context, t Target, p Params) Result {
	store, err := openRuns(ctx, t)
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("backend could not be opened: %v", err)}
	}
	defer store.Close()
	cfg := leasestall.Config{Seed: p.Seed, Workers: min(p.Clients, 16)}
	if p.Duration > 0 {
		cfg.Duration = p.Duration
	}
	if p.Progress != nil {
		cfg.Progress = &p.Progress.Ops
	}
	var results []*leasestall.Result
	var notes []string
	res, err := leasestall.RunGoroutines(ctx, store, cfg)
	if err != nil {
		return harnessFailure(ctx, "goroutine mode", err)
	}
	results = append(results, res)
	if path, ok := backends.RunStoreFile(t.URL); !ok {
		notes = append(notes, "process mode not run: it needs a database file several processes can open (runs+sqlite:PATH, runs+mutant:NAME?path=PATH)")
	} else if r, ok := store.(runstore.Resetter); !ok {
		notes = append(notes, "process mode not run: the store cannot be emptied in place")
	} else if err := r.Reset(ctx); err != nil {
		return harnessFailure(ctx, "process mode", fmt.Errorf("empty %s: %w", path, err))
	} else {
		cfg.URL = t.URL
		res, err := leasestall.RunProcesses(ctx, store, cfg)
		switch {
		case errors.Is(err, leasestall.ErrNoWorkers):
			notes = append(notes, "process mode not run: "+err.Error())
		case err != nil:
			return harnessFailure(ctx, "process mode", err)
		default:
			results = append(results, res)
		}
	}
	return leaseStallResult(p, results, notes)
}

func harnessFailure(ctx context.Context, mode string, err error) Result {
	if ctx.Err() != nil {
		return Result{Verdict: reports.Interrupted, Reason: "interrupted during the " + mode}
	}
	return Result{Verdict: reports.NotRun, Reason: fmt.Sprintf("%s could not run: %v", mode, err)}
}

// leaseStallResult keeps each mode's history (and a visualization of the
// first run porcupine rejects) and turns the results into one verdict.
func leaseStallResult(p Params, results []*leasestall.Result, notes []string) Result {
	out := Result{Verdict: reports.Pass, Metrics: map[string]float64{}}
	var violations []leases.Violation
	unknown, stalled := false, false
	for _, r := range results {
		if r.Counts.Stalls == 0 {
			notes = append(notes, r.Mode+" mode stalled no worker (the run ended before its first stall: give a longer --duration)")
		}
		stalled = stalled || r.Counts.Stalls > 0
		var buf strings.Builder
		if err := leases.WriteJSONL(&buf, r.History); err == nil {
			keep(p, evidence.ModeHistoryFile(r.Mode), []byte(buf.String()))
		}
		if len(r.Report.Illegal) > 0 {
			var html strings.Builder
			if err := leases.Visualize(&html, r.Report, r.Report.Illegal[0]); err == nil {
				keep(p, evidence.ModeVisualizationFile(r.Mode), []byte(html.String()))
			}
		}
		keep(p, evidence.ModeNotesFile(r.Mode), []byte(strings.Join(append([]string{r.Summary()}, r.Notes...), "\n")+"\n"))
		violations = append(violations, r.Violations...)
		unknown = unknown || r.Verdict == leases.Unknown
		out.Ops += int64(r.Counts.Ops)
		for k, v := range map[string]int{"ops": r.Counts.Ops, "claims": r.Counts.Claims, "stalls": r.Counts.Stalls,
			"past_lease_attempts": r.Counts.PastLease, "takeovers": r.Counts.Takeovers, "runs_checked": r.Counts.Runs} {
			out.Metrics[r.Mode+"_"+k] = float64(v)
		}
		if r.Mode == "goroutines" { // process mode interrupts no holder
			out.Metrics[r.Mode+"_interrupted_holders"] = float64(r.Counts.Interrupts)
		}
	}
	switch {
	case len(violations) > 0:
		out.Verdict, out.Guarantee = reports.Fail, violations[0].Guarantee
		out.Reason = strings.Join(strings.Fields(violations[0].String()), " ")
		if len(violations) > 1 {
			out.Reason += fmt.Sprintf(" (and %d more)", len(violations)-1)
		}
	case unknown:
		out.Verdict, out.Reason = reports.Fail, "a run's history could not be decided (an operation's outcome is unknown, or porcupine timed out): verdict unknown"
	case !stalled:
		// Leases were claimed and renewed, but no holder ever stopped: a
		// run that tried nothing of what the scenario is for.
		out.Verdict, out.Reason = reports.NotRun, strings.Join(notes, "; ")
	default:
		out.Reason = strings.Join(notes, "; ")
	}
	return out
}
