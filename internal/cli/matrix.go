package cli

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/storecheck/storecheck/internal/runner"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// matrix is what run and qualify share: the scenarios, the seed, the knobs,
// where results go and where servers come from. Each command adds its own way
// of naming backends.
type matrix struct {
	k        knobs
	names    stringList
	seed     seedFlag
	out      outputFlags
	servers  serverFlags
	shard    shardFlag
	parallel int
}

// register adds the shared flags; scenarioFlag is the name of the scenario
// flag ("scenario" for run, "scenarios" for qualify).
func (m *matrix) register(fs *flag.FlagSet, scenarioFlag string) {
	m.names.split = true
	fs.Var(&m.names, scenarioFlag, "scenario name(s), comma-separated or repeated (default: every scenario that applies to each backend); see 'storecheck scenarios'")
	// run and qualify take the same flags: the other spelling too.
	other := map[string]string{"scenario": "scenarios", "scenarios": "scenario"}[scenarioFlag]
	fs.Var(&m.names, other, "the same as --"+scenarioFlag)
	fs.Var(&m.seed, "seed", "seed for every random choice (default: a fresh one, printed)")
	m.k.register(fs)
	m.out.register(fs)
	m.servers.register(fs)
	fs.Var(&m.shard, "shard", "K/N: run only shard K of N of the plan (runs K, K+N, K+2N, … of the whole plan, with their seeds and folder numbers), for a CI matrix; 'storecheck merge' combines the N summaries")
	fs.IntVar(&m.parallel, "parallel", defaultParallel(), "runs at once: runs of different backends side by side, each backend's in order (runs that share nothing — memory:, a cluster each run starts, a {dir} folder — side by side too); the timed scenarios (faults, lag, crashes, stalls) once the others have all started, longest first, each when the cores it keeps busy fit the machine's beside those going (one for an embedded store or an untimed run, half per node of a cluster, less for a scenario that mostly waits: lease-stall, the lag simulation's sweep; runs on in-process stores, with no server beside them, up to half again the cores among themselves); the report is the same; the default is one per CPU (--parallel 1: one after another, each run's figures taken on a machine of its own)")
}

// defaultParallel is one run per CPU. A run of the embedded default keeps
// about one core busy (0.3–1.2 cores measured per scenario,
// docs/PERFORMANCE.md), so one per core gives each about what it has
// alone. The timed runs go once the others have all started, each when
// the cores it keeps busy fit the machine's beside those going
// (Plan.TimedCores; runner.footprint reads each run's, an untimed run
// counting one):
// then the faults they inject and the operations caught in them are what
// they are alone; their throughput is that of a shared machine, which the
// summary records (Summary.Parallel). A run on a 3-node rqlite cluster
// keeps 1.5 cores busy, so on two cores those go one at a time: two side
// by side lost a detection one alone made.
func defaultParallel() int { return max(1, runtime.NumCPU()) }

// inProcessOvercommit lets the timed runs on in-process stores keep half
// again the machine's cores busy among themselves (Plan.InProcessOvercommit):
// alone, each leaves part of its core idle on fsyncs, pauses and its own
// start and check (a qualification of the embedded default kept 1.43 of 2
// cores busy), and side by side at this density they caught what they
// caught alone and raised no false alarm (docs/PERFORMANCE.md, twenty-fourth
// session). A run of a server still never goes where more than the
// machine's cores are busy.
const inProcessOvercommit = 1.5

// shardFlag is --shard K/N.
type shardFlag struct{ s *reports.Shard }

func (f *shardFlag) String() string {
	if f.s == nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", f.s.K, f.s.N)
}

func (f *shardFlag) Set(v string) error {
	ks, ns, ok := strings.Cut(v, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	if !ok || errK != nil || errN != nil || n < 1 || k < 1 || k > n {
		return fmt.Errorf("want K/N with 1 <= K <= N, e.g. 2/4; got %q", v)
	}
	f.s = &reports.Shard{K: k, N: n}
	return nil
}

// plan checks the flags, prepares the output folder and returns the plan for
// urls (the embedded default when there are none).
func (m *matrix) plan(e *env, urls []string) (runner.Plan, error) {
	if err := m.k.validate(); err != nil {
		return runner.Plan{}, err
	}
	if err := m.servers.validate(); err != nil {
		return runner.Plan{}, err
	}
	if m.parallel < 1 {
		return runner.Plan{}, usagef("--parallel %d: want 1 or more runs at once", m.parallel)
	}
	scs, onlyApplicable, err := lookupScenarios(m.names.values)
	if err != nil {
		return runner.Plan{}, err
	}
	// Bad backends are refused before any folder is made or latest moves.
	if len(urls) > 0 {
		urls = m.servers.apply(urls)
		if err := validateBackends(urls); err != nil {
			return runner.Plan{}, err
		}
	}
	if len(urls) == 0 {
		urls = m.servers.apply(embeddedDefault())
	}
	// So are knobs a scenario of the plan would refuse: run, each would be
	// NOT RUN, which under qualify's default rule passes the gate.
	if err := checkKnobs(runner.Matrix(urls, scs, 1, onlyApplicable), m.k.params(1)); err != nil {
		return runner.Plan{}, err
	}
	if err := m.out.resolve(); err != nil {
		return runner.Plan{}, err
	}
	s := m.seed.resolve()
	announceSeed(e, m.out, s)
	k := m.k
	entries := runner.Matrix(urls, scs, s, onlyApplicable)
	var shard *reports.Shard
	if m.shard.s != nil {
		sh := *m.shard.s
		sh.Plan, sh.PlanDigest = len(entries), runner.PlanDigest(entries, k.options(), m.out.dir)
		entries, shard = runner.ShardOf(entries, sh), &sh
	}
	return runner.Plan{
		Entries: entries, Out: m.out.dir, Options: k.options(), Params: k.params(s),
		Reproduce: k.reproduce, Shard: shard, Parallel: m.parallel, KeepStores: true,
		TimedCores:          runtime.NumCPU(), // timed runs within the machine's cores (defaultParallel)
		InProcessOvercommit: inProcessOvercommit,
	}, nil
}

// checkKnobs refuses knobs that a scenario of entries would refuse on any
// backend (scenarios.Scenario.Knobs).
func checkKnobs(entries []runner.Entry, p scenarios.Params) error {
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Scenario.Name] {
			continue
		}
		seen[e.Scenario.Name] = true
		if err := e.Scenario.CheckKnobs(p); err != nil {
			return usagef("%s cannot run with the flags given: %v", e.Scenario.Name, err)
		}
	}
	return nil
}
