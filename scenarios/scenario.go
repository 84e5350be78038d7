// Package scenarios holds storecheck's named, reproducible runs. A scenario is
// plain data: a name, a line saying what it establishes, which backends it
// applies to, and the function that runs it against one backend. Every random
// choice a scenario makes comes from Params.Seed.
package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
)

// Target is the backend a scenario runs against, resolved from its URL
// (print the URL only through reports.Redact); its Open opens a fresh
// store.
type Target struct {
	*backends.Target
	// Opener, when set, replaces the backend's Open: a test that watches
	// what a scenario opens. It is given the URL the scenario opens, which
	// may not be the one the test gave (a scenario that gives rqlited a
	// snapshot threshold rewrites it: snapshotOften).
	Opener func(ctx context.Context, url string, cfg model.Config) (model.Store, error)
}

// Open opens a fresh store of the backend.
func (t Target) Open(ctx context.Context, cfg model.Config) (model.Store, error) {
	if t.Opener != nil {
		return t.Opener(ctx, t.URL, cfg)
	}
	return t.Target.Open(ctx, cfg)
}

// TargetFor resolves a backend URL for the scenarios.
func TargetFor(rawURL string) (Target, error) {
	t, err := backends.Resolve(rawURL)
	if err != nil {
		return Target{}, err
	}
	return Target{Target: t}, nil
}

// Params are the knobs a scenario reads. Zero values mean the scenario's
// defaults.
type Params struct {
	Seed   uint64
	OutDir string // the run's own folder; created by the runner
	Logger *slog.Logger

	// Conformance.
	Checks int
	Steps  int
	// ShrinkRuns bounds the minimisation of a failing sequence by the test
	// cases it re-runs (deterministic); 0 means the engine's default.
	ShrinkRuns int
	// ShrinkTime is a wall-clock backstop on the minimisation; 0 means the
	// engine's default (5 minutes).
	ShrinkTime time.Duration

	// Progress, when set, receives live counts for a progress display.
	Progress *Progress

	// Concurrent workloads.
	Clients    int
	Executions int
	Ops        int
	Duration   time.Duration

	// Cycles is crash-recovery's number of kill-and-recover cycles; 0
	// means procfault.DefaultCycles.
	Cycles int
}

// Progress is what a running scenario shows of itself.
type Progress struct {
	Ops   atomic.Int64 // operations (or workload steps) done
	Fault atomic.Value // string: the fault now injected, "" for none
}

// folder is the run's evidence folder; no folder when OutDir is "".
func folder(p Params) evidence.Folder { return evidence.At(p.OutDir) }

// keep writes one file into the run's folder, if it has one; a failure is
// logged, not fatal: the verdict stands without it.
func keep(p Params, name string, data []byte) {
	if _, err := folder(p).WriteFile(name, data); err != nil && p.Logger != nil {
		p.Logger.Warn("could not keep "+name, "err", err)
	}
}

// keepLines keeps lines as one file, a line each; nothing for no lines.
func keepLines(p Params, name string, lines []string) {
	if len(lines) > 0 {
		keep(p, name, []byte(strings.Join(lines, "\n")+"\n"))
	}
}

// CurrentFault returns the fault now injected, or "".
func (p *Progress) CurrentFault() string {
	s, _ := p.Fault.Load().(string)
	return s
}

// Result is what a scenario reports about one run.
type Result struct {
	Verdict      reports.Verdict
	Reason       string
	Guarantee    string
	Ops          int64
	Cases        int64
	MinimalSteps []string
	Metrics      map[string]float64
	// Measured holds latency and throughput measured from the run's
	// history, where it has one.
	Measured *reports.Metrics
	// Digest identifies the operation sequence, where the scenario's is a
	// pure function of the seed.
	Digest string
	// Servers are the servers the run ran against, as they describe
	// themselves (with their versions).
	Servers []string
}

// Scenario is one named run.
type Scenario struct {
	Name    string
	Summary string
	// Needs are the capabilities a backend must offer for the scenario to
	// make sense (package backends); Applies follows from them.
	Needs []backends.Capability
	// Timed says the scenario's verdict or figures hang on timing (faults
	// and their windows, replica lag, crashes, stalls): under --parallel
	// it runs alone, so that no other run's load moves them.
	Timed bool
	// Cores, when set, is how many cores a run of the scenario on the
	// target keeps busy, measured (docs/PERFORMANCE.md), where that is less
	// than the target's own count (backends.Target.Cores): a timed run that
	// mostly waits out its windows. Nil means the target's count.
	Cores func(t *backends.Target) float64
	// Length is about how long a timed run of the scenario on an embedded
	// store takes with the default flags, measured alone
	// (docs/PERFORMANCE.md): timed runs start longest first, so that the
	// short ones fill in around them. Zero: unknown, after the others.
	Length time.Duration
	Run    func(ctx context.Context, t Target, p Params) Result
	// Knobs, when set, says what in p's knobs (clients, executions, ops,
	// duration) the scenario would refuse on any backend, so that a
	// command refuses them as bad usage before anything runs rather than
	// reporting every run NOT RUN (CheckKnobs).
	Knobs func(p Params) error
}

// CheckKnobs says what in p's knobs the scenario would refuse; nil when it
// takes them (or checks none).
func (s Scenario) CheckKnobs(p Params) error {
	if s.Knobs == nil {
		return nil
	}
	return s.Knobs(p)
}

// CoresOn is how many cores a run of the scenario on t keeps busy.
func (s Scenario) CoresOn(t *backends.Target) float64 {
	if s.Cores != nil {
		return s.Cores(t)
	}
	return t.Cores
}

// Applies reports whether the scenario makes sense for a backend, and if
// not, why.
func (s Scenario) Applies(t *backends.Target) (bool, string) {
	if _, why := t.Lacks(s.Needs); why != "" {
		return false, why
	}
	return true, ""
}

// All returns every scenario, by name.
func All() []Scenario {
	list := []Scenario{conformanceScenario(), concurrentScenario(), replicaLagScenario(), crashRecoveryScenario(), powerLossScenario(), writerStallScenario()}
	list = append(list, rqliteScenarios()...)
	list = append(list, runsConformanceScenario(), leaseStallScenario())
	for i := range list {
		list[i].Timed = !untimed(list[i].Name)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

// untimed are the scenarios whose verdicts rest on their sequence or
// history alone: the property suites, and the concurrent workload (its
// throughput and latency figures move under load; its verdict does not).
// Every other scenario is Timed.
func untimed(name string) bool {
	switch name {
	case "conformance", "runs-conformance", "concurrent":
		return true
	}
	return false
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(names, ", "))
}

// opener is t.Open telling a backend that starts servers of its own
// (rqlite+process:, libsql+replica:) to write their logs into the run's folder, logs/, where
// they outlive a failed start and a NOT RUN reason can point at them.
func (t Target) opener(p Params) conformance.Opener {
	dir := folder(p).LogDir()
	return func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return t.Open(backends.WithLogDir(ctx, dir), cfg)
	}
}

// probe opens the backend once, so that a backend that cannot start is
// reported NOT RUN with the reason instead of as a failed check, and
// returns the servers it runs on. The backend did open: an error closing
// it is a warning, as it is after any run, not a reason to run nothing (an
// adapter that exits right after its hello breaks at the check's first
// operation, and is reported there).
func probe(ctx context.Context, t Target, p Params) ([]string, error) {
	s, err := t.opener(p)(ctx, defaultProbeConfig())
	if err != nil {
		return nil, err
	}
	srv := servers(s)
	if err := s.Close(); err != nil && p.Logger != nil {
		p.Logger.Warn("could not close the backend after opening it", "err", err)
	}
	return srv, nil
}

// servers asks a store which servers it runs on, if it can say.
func servers(s any) []string {
	if d, ok := s.(interface{ Servers() []string }); ok {
		return d.Servers()
	}
	return nil
}
