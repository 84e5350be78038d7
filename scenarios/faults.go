package scenarios

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/procfault"
	"github.com/storecheck/storecheck/reports"
)

// crashRecoveryScenario SIGKILLs worker processes mid-commit and checks what
// the next one recovers (properties 3, 5 and 9 under process crashes).
func crashRecoveryScenario() Scenario {
	return Scenario{
		Name:    "crash-recovery",
		Length:  1300 * time.Millisecond,
		Summary: "a worker process commits until SIGKILLed at a seeded moment, often mid-commit; each recovery is checked for integrity, durability of every acknowledged commit, atomicity of the one in flight, and against the reference model",
		Needs:   procfault.CrashNeeds(),
		Run:     runCrashRecovery,
	}
}

// writerStallScenario SIGSTOPs a worker process holding the write lock while
// others run a recorded workload on the same file.
func writerStallScenario() Scenario {
	return Scenario{
		Name:    "writer-stall",
		Length:  2500 * time.Millisecond,
		Summary: "worker processes share one file; one is SIGSTOPped holding the write lock, the others see busy errors; the merged history is checked for linearizability, atomicity, delivery and dedupe",
		Needs:   procfault.StallNeeds(),
		Run:     runWriterStall,
	}
}

func runCrashRecovery(ctx context.Context, t Target, p Params) Result {
	cmd, err := procfault.SelfCommand()
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: err.Error()}
	}
	opt := procfault.CrashOptions{URL: t.URL, Seed: p.Seed, Cycles: p.Cycles, Command: cmd}
	if p.Progress != nil {
		opt.Ops, opt.Fault = &p.Progress.Ops, func(f string) { p.Progress.Fault.Store(f) }
	}
	res, err := procfault.CrashRecovery(ctx, opt)
	if res != nil {
		keepLines(p, evidence.CyclesFile, append(slices.Clone(res.Cycle), withPrefix("note: ", res.Notes)...))
	}
	if out, done := procOutcome(err); done {
		return out
	}
	out := Result{Ops: int64(res.Acked), Metrics: crashMetrics(res), Verdict: reports.Pass}
	if res.Err != nil {
		out.Verdict, out.Guarantee, out.Reason = reports.Fail, procfault.Guarantee(res.Err), singleLine(res.Err.Error())
	}
	return out
}

func crashMetrics(res *procfault.CrashResult) map[string]float64 {
	m := map[string]float64{
		"cycles":             float64(res.Cycles),
		"crashes_in_flight":  float64(res.InFlight),
		"crashes_mid_commit": float64(res.MidCommit),
		"in_flight_applied":  float64(res.Applied),
		"commits_acked":      float64(res.Acked),
		"commit_latency_us":  float64(res.CommitLatency.Microseconds()),
		"cycle_ms_mean":      meanMillis(res.CycleTimes),
		"cycle_ms_max":       maxMillis(res.CycleTimes),
		"recovery_ms_mean":   meanMillis(res.RecoveryTimes),
	}
	if res.Hooks {
		m["before_commit_hook"] = 1
	}
	return m
}

func runWriterStall(ctx context.Context, t Target, p Params) Result {
	cmd, err := procfault.SelfCommand()
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: err.Error()}
	}
	opt := procfault.StallOptions{
		URL: t.URL, Seed: p.Seed, Clients: p.Clients / procfault.DefaultWorkers, Executions: p.Executions,
		Duration: p.Duration, Command: cmd, OutDir: p.OutDir,
	}
	if p.Progress != nil {
		opt.Ops, opt.Fault = &p.Progress.Ops, func(f string) { p.Progress.Fault.Store(f) }
	}
	res, err := procfault.WriterStall(ctx, opt)
	if out, done := procOutcome(err); done {
		return out
	}
	out := Result{Ops: int64(len(res.History.Ops)), Metrics: stallMetrics(res), Verdict: reports.Pass}
	switch {
	case res.Err != nil:
		out.Verdict, out.Reason = reports.Fail, singleLine(res.Err.Error())
		if out.Guarantee = procfault.Guarantee(res.Err); out.Guarantee == "" {
			out.Guarantee = res.Report.Guarantee()
		}
	case res.Report.Verdict == linearizability.Unknown:
		// A checker that ran out of time proved nothing: never a pass.
		out.Verdict, out.Reason = reports.Fail, "the linearizability checker timed out: verdict unknown"
	}
	return out
}

func stallMetrics(res *procfault.StallResult) map[string]float64 {
	m := map[string]float64{
		"stalled_worker":    float64(res.Stalled),
		"stall_ms":          float64(res.Window.Milliseconds()),
		"busy_during_stall": float64(res.Busy),
		"clock_step_us":     float64(res.ClockStep.Microseconds()),
	}
	if rep := res.Report; rep != nil {
		m["checker_ms"] = float64((rep.LinearizationTime + rep.GlobalTime).Milliseconds())
	}
	for _, op := range res.History.Ops {
		switch {
		case op.Heal:
		case op.Output.Outcome == linearizability.OutcomeFailed:
			m["failed"]++
		case op.Output.Outcome == linearizability.OutcomeIndeterminate:
			m["indeterminate"]++
		case op.Output.Outcome == linearizability.OutcomeConflict:
			m["conflicts"]++
		}
		if op.Kind.IsCommit() && !op.Heal {
			m["commits"]++
		}
	}
	return m
}

// procOutcome turns a procfault harness error into a result: interrupted,
// or not run with the reason. done is false when err is nil.
func procOutcome(err error) (Result, bool) {
	switch {
	case err == nil:
		return Result{}, false
	case errors.Is(err, context.Canceled):
		return Result{Verdict: reports.Interrupted, Reason: "interrupted: every worker was killed and reaped"}, true
	default:
		return Result{Verdict: reports.NotRun, Reason: singleLine(err.Error())}, true
	}
}

// keepLines writes lines to a file of the run's folder, when it has one.
func withPrefix(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

func meanMillis(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum.Microseconds()) / float64(len(ds)) / 1000
}

func maxMillis(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	return float64(slices.Max(ds).Microseconds()) / 1000
}

func singleLine(s string) string { return strings.Join(strings.Fields(s), " ") }
