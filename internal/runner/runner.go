// Package runner executes a plan of backend × scenario runs, each in its own
// folder, and collects the summary. The run and qualify commands share it.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// Plan is what to run.
type Plan struct {
	Backends  []string // backend URLs
	Scenarios []scenarios.Scenario
	Params    scenarios.Params // Seed and knobs; OutDir is set per run
	Out       string           // the output folder; summary.json goes here
	// Reproduce renders the command line that repeats one run.
	Reproduce func(backend, scenario string) string
	// Options are recorded with every run, for replay.
	Options map[string]string
	// OnlyApplicable leaves out the backend × scenario pairs whose scenario
	// does not apply to the backend, instead of listing them NOT RUN: set
	// when the scenarios were not chosen by name ("every scenario that
	// applies"). A scenario asked for by name that does not apply is NOT RUN,
	// with the reason.
	OnlyApplicable bool
}

// Progress receives one call when a run starts, with the counters the run
// updates as it goes, and one when it ends.
type Progress interface {
	Started(backend, scenario string, live *scenarios.Progress)
	Finished(r reports.Run)
}

// Execute runs every backend × scenario of the plan in order. Runs after an
// interruption are recorded INTERRUPTED without starting, so the summary
// always lists the whole plan.
func Execute(ctx context.Context, plan Plan, progress Progress) *reports.Summary {
	sum := &reports.Summary{Seed: plan.Params.Seed}
	// The runs folder is the plan's own: artifacts of an earlier run must not
	// be read as this one's.
	_ = os.RemoveAll(filepath.Join(plan.Out, "runs"))
	i := 0
	for _, backend := range plan.Backends {
		for _, sc := range plan.Scenarios {
			if plan.OnlyApplicable && sc.Applies != nil {
				if ok, _ := sc.Applies(backend); !ok {
					continue
				}
			}
			i++
			live := &scenarios.Progress{}
			progress.Started(reports.Redact(backend), sc.Name, live)
			r := runOne(ctx, plan, i, backend, sc, live)
			sum.Runs = append(sum.Runs, r)
			progress.Finished(r)
		}
	}
	return sum
}

func runOne(ctx context.Context, plan Plan, i int, backend string, sc scenarios.Scenario, live *scenarios.Progress) reports.Run {
	shown := reports.Redact(backend)
	r := reports.Run{
		Backend: shown, Scenario: sc.Name, Seed: plan.Params.Seed,
		Reproduce: plan.Reproduce(shown, sc.Name), Options: plan.Options,
	}
	if ctx.Err() != nil {
		r.Verdict, r.Reason = reports.Interrupted, "not started: the run was interrupted"
		return r
	}
	if sc.Applies != nil {
		if ok, why := sc.Applies(backend); !ok {
			r.Verdict, r.Reason = reports.NotRun, "scenario does not apply: "+why
			return r
		}
	}
	r.Dir = filepath.Join("runs", fmt.Sprintf("%02d-%s-%s", i, slug(shown), sc.Name))
	params := plan.Params
	params.OutDir = filepath.Join(plan.Out, r.Dir)
	params.Progress = live
	if err := os.MkdirAll(params.OutDir, 0o755); err != nil {
		r.Verdict, r.Reason = reports.NotRun, fmt.Sprintf("cannot create the run folder: %v", err)
		return r
	}
	if params.Logger == nil {
		params.Logger = slog.New(slog.DiscardHandler)
	}
	target := scenarios.Target{URL: backend, Open: func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return backends.Open(ctx, backend, cfg)
	}}
	start := time.Now()
	res := sc.Run(ctx, target, params)
	r.DurationMS = time.Since(start).Milliseconds()
	r.Verdict, r.Reason, r.Guarantee = res.Verdict, res.Reason, res.Guarantee
	r.Ops, r.Cases, r.MinimalSteps, r.Metrics = res.Ops, res.Cases, res.MinimalSteps, res.Metrics
	r.SequenceDigest, r.Servers = res.Digest, res.Servers
	if res.Measured != nil {
		res.Measured.Fill(&r)
	}
	if r.Verdict == reports.Pass && r.Ops == 0 {
		// A check that ran nothing proved nothing: never a pass.
		r.Verdict, r.Reason = reports.NotRun, "the scenario reported success but ran no operation"
	}
	if ctx.Err() != nil && r.Verdict == reports.Pass {
		// A pass decided after the interruption still holds, but anything
		// the scenario did not finish must not read as PASS.
		r.Reason = "interrupted after the checks completed"
	}
	return r
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9]+`)

// slug turns a backend URL into a short folder-name part.
func slug(s string) string {
	s = strings.Trim(unsafe.ReplaceAllString(s, "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "backend"
	}
	return s
}
