package mutantrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/storecheck/storecheck/internal/runner"
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
	// ShrinkRuns bounds the minimisation of a conformance failure by the
	// test cases it re-runs; 0 means the engine's default. ShrinkTime is a
	// wall-clock backstop; 0 means the engine's.
	ShrinkRuns int
	ShrinkTime time.Duration
}

// DefaultSizing is the sizing of `storecheck mutants`: minimisation gets
// the engine's default number of re-runs, enough to reach the shortest
// sequence for every mutant here.
func DefaultSizing() Sizing {
	return Sizing{Checks: 100, Steps: 30, Clients: 16, Executions: 2, Ops: 1000}
}

// DefaultScenarios are the scenarios the catalogue runs, in order.
func DefaultScenarios() ([]scenarios.Scenario, error) {
	var out []scenarios.Scenario
	// crash-recovery and power-loss apply to the SQLite and libSQL files
	// and to the mutants that run on a file (the durability mutants): they
	// cost the others nothing.
	for _, name := range []string{"conformance", "concurrent", "crash-recovery", "power-loss"} {
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
	// Parallel is how many runs go at once (runner.Plan.Parallel).
	Parallel int
	// StopAtCatch skips a mutant's later scenarios once one has caught it
	// (they are recorded NOT RUN); correct backends always run them all.
	StopAtCatch bool
	// Progress, when set, is told of each run as it ends.
	Progress func(s Subject, r RunResult)
	// Reproduce, when set, renders the command that repeats one run.
	Reproduce func(seed uint64, backend, scenario string) string
}

// Run runs every scenario against every subject, r.Parallel runs at a
// time (the times measured are then those of a shared machine; the table
// says how many went at once), through the runner every command uses,
// and returns the table and the summary the reports render. The error is
// for a runner that could not start; a run that could not is a row of the
// table (NOT RUN), and an interrupted one marks the table interrupted.
func (r Runner) Run(ctx context.Context) (*Table, *reports.Summary, error) {
	if r.Seed == 0 {
		return nil, nil, errors.New("mutants: the seed must be positive")
	}
	subjects := r.Subjects
	if subjects == nil {
		subjects = Subjects()
	}
	scs := r.Scenarios
	if scs == nil {
		var err error
		if scs, err = DefaultScenarios(); err != nil {
			return nil, nil, err
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
	kinds := map[string]Subject{}
	var entries []runner.Entry
	for _, s := range subjects {
		kinds[s.Name] = s
		for _, sc := range scs {
			entries = append(entries, runner.Entry{Backend: s.URL(runner.DirPlaceholder), Scenario: sc, Seed: t.Seeds[sc.Name], Subject: s.Name})
		}
	}
	meters := &meters{byRun: map[int]*meter{}}
	plan := runner.Plan{
		Entries: entries, Out: r.OutDir, Budget: r.Budget, TempDir: r.TempDir, Reproduce: r.Reproduce, Parallel: r.Parallel,
		Params: scenarios.Params{Checks: r.Sizing.Checks, Steps: r.Sizing.Steps, ShrinkRuns: r.Sizing.ShrinkRuns, ShrinkTime: r.Sizing.ShrinkTime,
			Clients: r.Sizing.Clients, Executions: r.Sizing.Executions, Ops: r.Sizing.Ops, Duration: r.Sizing.Duration},
		Instrument: meters.wrap,
		Skip: func(done []reports.Run, e runner.Entry) string {
			if !r.StopAtCatch || kinds[e.Subject].Kind != Mutant {
				return ""
			}
			for _, d := range done {
				if d.Subject == e.Subject && d.Verdict == reports.Fail {
					return "skipped: an earlier scenario caught the mutant"
				}
			}
			return ""
		},
	}
	sum := runner.Execute(ctx, plan, progress{r.Progress, kinds, meters})
	for i, s := range subjects {
		row := Row{Name: s.Name, Kind: s.Kind, Breaks: s.Breaks}
		for j := range scs {
			n := i*len(scs) + j
			row.Runs = append(row.Runs, meters.result(n+1, sum.Runs[n]))
		}
		row.settle()
		t.Rows = append(t.Rows, row)
	}
	t.Parallel = sum.Parallel
	t.Interrupted = ctx.Err() != nil
	return t, sum, nil
}

// meters holds the meter of every run that opened a store.
type meters struct {
	mu    sync.Mutex
	byRun map[int]*meter
}

// wrap meters a store run i opened; every store of a run shares a meter.
func (ms *meters) wrap(i int, st model.Store) model.Store {
	ms.mu.Lock()
	m := ms.byRun[i]
	if m == nil {
		m = newMeter()
		ms.byRun[i] = m
	}
	ms.mu.Unlock()
	return m.wrap(st)
}

// result is run i as the table shows it: what the run reported, and the
// store calls and time until the failure was found.
func (ms *meters) result(i int, run reports.Run) RunResult {
	res := RunResult{Scenario: run.Scenario, Seed: run.Seed, Backend: run.Backend, Verdict: run.Verdict, Guarantee: run.Guarantee,
		Reason: run.Reason, Ops: run.Ops, Cases: run.Cases, MinimalSteps: run.MinimalSteps, Metrics: run.Metrics, Dir: run.Dir,
		Time: time.Duration(run.DurationMS) * time.Millisecond, NotApplicable: run.NotApplicable, SequenceDigest: run.SequenceDigest}
	res.OpsToCatch, res.TimeToCatch = res.Ops, res.Time
	ms.mu.Lock()
	m := ms.byRun[i]
	ms.mu.Unlock()
	if m == nil {
		return res
	}
	if ops, at, ok := m.untilCaught(run.Reason); ok && res.Verdict == reports.Fail {
		res.OpsToCatch, res.TimeToCatch = ops, at
	}
	return res
}

// progress tells the Runner's Progress of each run as it ends.
type progress struct {
	fn     func(s Subject, r RunResult)
	kinds  map[string]Subject
	meters *meters
}

func (progress) Started(string, string, *scenarios.Progress) {}

func (p progress) Finished(run reports.Run) {
	if p.fn != nil {
		p.fn(p.kinds[run.Subject], RunResult{Scenario: run.Scenario, Seed: run.Seed, Backend: run.Backend,
			Verdict: run.Verdict, Reason: run.Reason, Ops: run.Ops, Time: time.Duration(run.DurationMS) * time.Millisecond})
	}
}
