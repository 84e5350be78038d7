package mutantrun

import (
	"context"
	"errors"
	"fmt"
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

// DefaultBudget bounds each run (one subject × one scenario). The
// conformance scenario minimises a failure for up to 30 s after finding it;
// porcupine can take as long to prove a lost-update history illegal, and a
// run stopped by the budget while checking keeps what the other checks
// found.
const DefaultBudget = time.Minute

// Sizing is what the scenarios are asked to do. The concurrent figures make
// a run take under a second on two cores; 16 clients on 2 executions give
// the contention that catches read-check-write, stale-read and split-commit
// at every seed tried with as few as 250 operations (1000 leaves a margin).
type Sizing struct {
	Checks, Steps            int // conformance
	Clients, Executions, Ops int // concurrent
	Duration                 time.Duration
	// ShrinkTime bounds the minimisation of a conformance failure; 0 means
	// rapid's 30 s.
	ShrinkTime time.Duration
}

// DefaultSizing is the sizing of `storecheck mutants`: minimisation gets 10 s
// a mutant, enough to reach the shortest sequence for every mutant here.
func DefaultSizing() Sizing {
	return Sizing{Checks: 100, Steps: 30, Clients: 16, Executions: 2, Ops: 1000, ShrinkTime: 10 * time.Second}
}

// DefaultScenarios are the scenarios the catalogue runs, in order.
func DefaultScenarios() ([]scenarios.Scenario, error) {
	var out []scenarios.Scenario
	for _, name := range []string{"conformance", "concurrent"} {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("mutants: %w", err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// Runner runs scenarios against subjects.
type Runner struct {
	// Subjects to run; nil means Subjects().
	Subjects []Subject
	// Scenarios to run against each; nil means DefaultScenarios().
	Scenarios []scenarios.Scenario
	// Seed is the base seed; each scenario's seed is DeriveSeed(Seed, name).
	Seed uint64
	// Budget bounds each run; 0 means DefaultBudget.
	Budget time.Duration
	// Sizing of the scenarios; the zero value means DefaultSizing().
	Sizing Sizing
	// OutDir, when set, receives every run's artifacts in
	// OutDir/runs/NN-NAME-SCENARIO.
	OutDir string
	// TempDir is where each run's database folder is made; "" means the
	// system's.
	TempDir string
	// StopAtCatch skips a mutant's later scenarios once one has caught it
	// (they are recorded NOT RUN); correct backends always run them all.
	StopAtCatch bool
	// Progress, when set, is told of each run as it ends.
	Progress func(s Subject, r RunResult)
}

// Run runs every scenario against every subject, one run at a time (so the
// times measured are the runs' own), and returns the table. The error is for
// a runner that could not start; a run that could not is a row of the table
// (NOT RUN), and an interrupted one marks the table interrupted.
func (r Runner) Run(ctx context.Context) (*Table, error) {
	if r.Seed == 0 {
		return nil, errors.New("mutants: the seed must be positive")
	}
	subjects := r.Subjects
	if subjects == nil {
		subjects = Subjects()
	}
	scs := r.Scenarios
	if scs == nil {
		var err error
		if scs, err = DefaultScenarios(); err != nil {
			return nil, err
		}
	}
	if r.Budget == 0 {
		r.Budget = DefaultBudget
	}
	if r.Sizing == (Sizing{}) {
		r.Sizing = DefaultSizing()
	}
	t := &Table{Seed: r.Seed, Budget: r.Budget, Sizing: r.Sizing, Seeds: map[string]uint64{}}
	for _, sc := range scs {
		t.Scenarios = append(t.Scenarios, sc.Name)
		t.Seeds[sc.Name] = DeriveSeed(r.Seed, sc.Name)
	}
	for i, s := range subjects {
		t.Rows = append(t.Rows, r.runSubject(ctx, i*len(scs), s, scs, t.Seeds))
	}
	t.Interrupted = ctx.Err() != nil
	return t, nil
}

// runSubject runs every scenario against one subject; n numbers the runs
// before it.
func (r Runner) runSubject(ctx context.Context, n int, s Subject, scs []scenarios.Scenario, seeds map[string]uint64) Row {
	row := Row{Name: s.Name, Kind: s.Kind, Breaks: s.Breaks}
	for _, sc := range scs {
		n++
		var res RunResult
		if row.Caught && r.StopAtCatch && s.Kind == Mutant {
			res = RunResult{Scenario: sc.Name, Seed: seeds[sc.Name], Backend: s.URL("."),
				Verdict: reports.NotRun, Reason: "skipped: an earlier scenario caught the mutant"}
		} else {
			res = r.runOne(ctx, n, s, sc, seeds[sc.Name])
		}
		row.Runs = append(row.Runs, res)
		row.settle()
		if r.Progress != nil {
			r.Progress(s, res)
		}
	}
	return row
}

// runOne runs one scenario against one subject, on a fresh store in a
// folder of its own that is removed afterwards.
func (r Runner) runOne(ctx context.Context, n int, s Subject, sc scenarios.Scenario, seed uint64) RunResult {
	res := RunResult{Scenario: sc.Name, Seed: seed, Backend: s.URL(".")}
	if ctx.Err() != nil {
		res.Verdict, res.Reason = reports.Interrupted, "not started: the run was interrupted"
		return res
	}
	dir, err := os.MkdirTemp(r.TempDir, "storecheck-mutants-*")
	if err != nil {
		res.Verdict, res.Reason = reports.NotRun, fmt.Sprintf("cannot create a database folder: %v", err)
		return res
	}
	defer os.RemoveAll(dir)
	url := s.URL(dir)
	if sc.Applies != nil {
		if ok, why := sc.Applies(url); !ok {
			res.Verdict, res.Reason = reports.NotRun, "scenario does not apply: "+why
			return res
		}
	}
	p := scenarios.Params{Seed: seed, Checks: r.Sizing.Checks, Steps: r.Sizing.Steps, ShrinkTime: r.Sizing.ShrinkTime,
		Clients: r.Sizing.Clients, Executions: r.Sizing.Executions, Ops: r.Sizing.Ops, Duration: r.Sizing.Duration}
	if r.OutDir != "" {
		res.Dir = filepath.Join("runs", fmt.Sprintf("%02d-%s-%s", n, slug(s.Name), sc.Name))
		p.OutDir = filepath.Join(r.OutDir, res.Dir)
		if err := os.MkdirAll(p.OutDir, 0o755); err != nil {
			res.Verdict, res.Reason = reports.NotRun, fmt.Sprintf("cannot create the run folder: %v", err)
			return res
		}
	}
	m := newMeter()
	target := scenarios.Target{URL: url, Open: func(ctx context.Context, cfg model.Config) (model.Store, error) {
		st, err := backends.Open(ctx, url, cfg)
		if err != nil {
			return nil, err
		}
		return m.wrap(st), nil
	}}
	rctx, cancel := context.WithTimeout(ctx, r.Budget)
	defer cancel()
	out := sc.Run(rctx, target, p)
	res.Time = time.Since(m.start)
	res.fill(out)
	switch {
	case ctx.Err() != nil && out.Verdict != reports.Fail:
		res.Verdict, res.Reason = reports.Interrupted, "interrupted: "+res.Reason
	case rctx.Err() != nil && out.Verdict != reports.Fail:
		res.Verdict, res.Reason = reports.NotRun, fmt.Sprintf("over the budget of %v: %s", r.Budget, res.Reason)
	}
	res.OpsToCatch, res.TimeToCatch = res.Ops, res.Time
	if ops, at, ok := m.untilCaught(out.Reason); ok && res.Verdict == reports.Fail {
		res.OpsToCatch, res.TimeToCatch = ops, at
	}
	return res
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9]+`)

// slug turns a name into a folder-name part.
func slug(s string) string {
	return strings.Trim(unsafe.ReplaceAllString(s, "-"), "-")
}
