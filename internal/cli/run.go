package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/internal/runner"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// knobs are the scenario options shared by run, qualify and replay.
type knobs struct {
	checks     int
	steps      int
	clients    int
	executions int
	ops        int
	duration   time.Duration
}

func (k *knobs) register(fs *flag.FlagSet) {
	fs.IntVar(&k.checks, "checks", defaultChecks, "conformance: test cases (random sequences) to run")
	fs.IntVar(&k.steps, "steps", defaultSteps, "conformance: average operations per sequence")
	fs.IntVar(&k.clients, "clients", defaultClients, "concurrent: clients running at once")
	fs.IntVar(&k.executions, "executions", defaultExecutions, "concurrent: executions the clients share (fewer means more contention)")
	fs.IntVar(&k.ops, "ops", defaultOps, "concurrent: workload steps in all (ignored when --duration is set)")
	fs.DurationVar(&k.duration, "duration", 0, "concurrent: run for this long instead of --ops")
}

func (k *knobs) validate() error {
	for _, c := range []struct {
		name string
		v    int
	}{{"checks", k.checks}, {"steps", k.steps}, {"clients", k.clients}, {"executions", k.executions}, {"ops", k.ops}} {
		if c.v < 1 {
			return usagef("--%s must be at least 1, got %d", c.name, c.v)
		}
	}
	if k.duration < 0 {
		return usagef("--duration must not be negative, got %v", k.duration)
	}
	return nil
}

// options records the knobs, for replay.
func (k *knobs) options() map[string]string {
	o := map[string]string{"checks": strconv.Itoa(k.checks), "steps": strconv.Itoa(k.steps),
		"clients": strconv.Itoa(k.clients), "executions": strconv.Itoa(k.executions), "ops": strconv.Itoa(k.ops)}
	if k.duration > 0 {
		o["duration"] = k.duration.String()
	}
	return o
}

// fromOptions sets the knobs recorded in a summary, keeping defaults for
// any missing. Its errors say what the run records ("records ops=0: at
// least 1"), for the caller to name the run: the values are the summary's,
// not flags of the command line.
func (k *knobs) fromOptions(o map[string]string) error {
	for _, knob := range []struct {
		name string
		dst  *int
	}{{"checks", &k.checks}, {"steps", &k.steps}, {"clients", &k.clients}, {"executions", &k.executions}, {"ops", &k.ops}} {
		if v, ok := o[knob.name]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("records %s=%q: not a number", knob.name, v)
			}
			if n < 1 {
				return fmt.Errorf("records %s=%d: at least 1 is a run's", knob.name, n)
			}
			*knob.dst = n
		}
	}
	if v, ok := o["duration"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("records duration=%q: not a duration of 0 or more", v)
		}
		k.duration = d
	}
	return nil
}

func (k *knobs) params(seed uint64) scenarios.Params {
	return scenarios.Params{Seed: seed, Checks: k.checks, Steps: k.steps, Clients: k.clients,
		Executions: k.executions, Ops: k.ops, Duration: k.duration}
}

// Defaults of the knobs, as register sets them.
const (
	defaultChecks     = 100
	defaultSteps      = 30
	defaultClients    = 8
	defaultExecutions = 4
	defaultOps        = 2000
)

// reproduce is the command line that repeats one run exactly: the knobs a
// scenario of its kind reads first (a property scenario's --checks and
// --steps, a workload's --clients, --executions and --ops or --duration),
// then every other knob not at its default, so that no scenario depends
// on a knob the line leaves out (runs-conformance reads --checks too).
func (k *knobs) reproduce(seed uint64, backend, scenario string) string {
	parts := []string{"storecheck", "run", "--backend", reports.ShellQuote(backend), "--scenario", scenario, "--seed", strconv.FormatUint(seed, 10)}
	property := []string{"--checks", strconv.Itoa(k.checks), "--steps", strconv.Itoa(k.steps)}
	workload := []string{"--clients", strconv.Itoa(k.clients), "--executions", strconv.Itoa(k.executions)}
	if k.duration > 0 {
		workload = append(workload, "--duration", k.duration.String())
	} else {
		workload = append(workload, "--ops", strconv.Itoa(k.ops))
	}
	first, rest := workload, property
	if strings.HasSuffix(scenario, "conformance") {
		first, rest = property, workload
	}
	parts = append(parts, first...)
	defaults := map[string]string{"--checks": strconv.Itoa(defaultChecks), "--steps": strconv.Itoa(defaultSteps),
		"--clients": strconv.Itoa(defaultClients), "--executions": strconv.Itoa(defaultExecutions), "--ops": strconv.Itoa(defaultOps)}
	for i := 0; i < len(rest); i += 2 {
		if d, ok := defaults[rest[i]]; !ok || rest[i+1] != d {
			parts = append(parts, rest[i], rest[i+1])
		}
	}
	return strings.Join(parts, " ")
}

func runCommand(ctx context.Context, e *env, args []string) (int, error) {
	var (
		m    matrix
		urls stringList
		list stringList
		cmds stringList
		fs   = flag.NewFlagSet("run", flag.ContinueOnError)
	)
	fs.Var(&urls, "backend", "backend URL, repeatable (default: the embedded backends, on fresh files per run kept in its folder, DIR/runs/NN-…/db); see 'storecheck backends'")
	fs.Var(&list, "backends", "backend URLs, comma-separated or repeated (as qualify takes them)")
	fs.Var(&cmds, "adapter", "command line of an out-of-process store, repeatable; the same as --backend 'exec:COMMAND' (docs/ADAPTER.md)")
	m.register(fs, "scenario")
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return helpOr(err)
	}
	backendURLs := append(urls.values, splitBackendList(list.values)...)
	for _, c := range cmds.values {
		backendURLs = append(backendURLs, backends.AdapterURL(c))
	}
	plan, err := m.plan(e, backendURLs)
	if err != nil {
		return ExitUsage, err
	}
	return execute(ctx, e, plan, m.out, notRunIsError, commandLine("run", args))
}

// lookupScenarios resolves names; none means every scenario that applies to
// each backend, which the second result says.
func lookupScenarios(names []string) ([]scenarios.Scenario, bool, error) {
	if len(names) == 0 {
		return scenarios.All(), true, nil
	}
	var scs []scenarios.Scenario
	for _, n := range names {
		sc, err := scenarios.Lookup(n)
		if err != nil {
			return nil, false, usagef("%v", err)
		}
		scs = append(scs, sc)
	}
	return scs, false, nil
}

func validateBackends(urls []string) error {
	for _, u := range urls {
		// A fresh folder is made per run for the placeholder; any existing
		// folder stands in for it here.
		if err := backends.Validate(runner.Inspectable(u)); err != nil {
			return usagef("%v", err)
		}
	}
	return nil
}

func helpOr(err error) (int, error) {
	if err == errHelp {
		return ExitOK, nil
	}
	return ExitUsage, err
}
