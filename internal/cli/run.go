package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/internal/runner"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// runFlags are the flags of `storecheck run`.
type runFlags struct {
	backends   stringList
	scenarios  stringList
	seed       seedFlag
	checks     int
	steps      int
	clients    int
	executions int
	ops        int
	duration   time.Duration
	out        string
	quiet      bool
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.scenarios.split = true
	fs.Var(&f.backends, "backend", "backend URL, repeatable (default: memory:, and sqlite: and libsql: files in DIR/db); see 'storecheck backends'")
	fs.Var(&f.scenarios, "scenario", "scenario name(s), repeatable or comma-separated (default: every scenario); see 'storecheck scenarios'")
	fs.Var(&f.seed, "seed", "seed for every random choice (default: a fresh one, printed)")
	fs.IntVar(&f.checks, "checks", 100, "conformance: test cases (random sequences) to run")
	fs.IntVar(&f.steps, "steps", 30, "conformance: average operations per sequence")
	fs.IntVar(&f.clients, "clients", 8, "concurrent: clients running at once")
	fs.IntVar(&f.executions, "executions", 4, "concurrent: executions the clients share (fewer means more contention)")
	fs.IntVar(&f.ops, "ops", 2000, "concurrent: operations in all (ignored when --duration is set)")
	fs.DurationVar(&f.duration, "duration", 0, "concurrent: run for this long instead of --ops")
	fs.StringVar(&f.out, "out", "storecheck-out", "output folder (DIR); summary.json is written there")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the verdict table")
}

func (f *runFlags) validate() error {
	for name, v := range map[string]int{"checks": f.checks, "steps": f.steps, "clients": f.clients, "executions": f.executions, "ops": f.ops} {
		if v < 1 {
			return usagef("--%s must be at least 1, got %d", name, v)
		}
	}
	if f.duration < 0 {
		return usagef("--duration must not be negative")
	}
	return nil
}

// options records the knobs that shape a run, for replay.
func (f *runFlags) options() map[string]string {
	o := map[string]string{"checks": strconv.Itoa(f.checks), "steps": strconv.Itoa(f.steps),
		"clients": strconv.Itoa(f.clients), "executions": strconv.Itoa(f.executions), "ops": strconv.Itoa(f.ops)}
	if f.duration > 0 {
		o["duration"] = f.duration.String()
	}
	return o
}

func runCommand(ctx context.Context, e *env, args []string) (int, error) {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		if err == errHelp {
			return ExitOK, nil
		}
		return ExitUsage, err
	}
	if err := f.validate(); err != nil {
		return ExitUsage, err
	}
	var scs []scenarios.Scenario
	if len(f.scenarios.values) == 0 {
		scs = scenarios.All() // each run checks whether its scenario applies
	}
	for _, n := range f.scenarios.values {
		sc, err := scenarios.Lookup(n)
		if err != nil {
			return ExitUsage, usagef("%v", err)
		}
		scs = append(scs, sc)
	}
	if err := prepareOut(f.out); err != nil {
		return ExitUsage, err
	}
	urls := f.backends.values
	if len(urls) == 0 {
		var err error
		if urls, err = embeddedDefault(f.out); err != nil {
			return ExitUsage, err
		}
	}
	for _, u := range urls {
		if err := backends.Validate(u); err != nil {
			return ExitUsage, usagef("%v", err)
		}
	}
	seed := f.seed.resolve()
	fmt.Fprintf(e.stderr, "storecheck: seed %d (repeat with --seed %d)\n", seed, seed)

	plan := runner.Plan{
		Backends: urls, Scenarios: scs, Out: f.out, Options: f.options(),
		Params: scenarios.Params{Seed: seed, Checks: f.checks, Steps: f.steps, Clients: f.clients,
			Executions: f.executions, Ops: f.ops, Duration: f.duration},
		Reproduce: func(backend, scenario string) string { return f.reproduce(seed, backend, scenario) },
	}
	sum := runner.Execute(ctx, plan, newLineProgress(e.stderr, f.quiet))
	sum.Command = "storecheck run " + strings.Join(args, " ")
	path := filepath.Join(f.out, "summary.json")
	if err := reports.WriteJSON(path, sum); err != nil {
		return ExitUsage, fmt.Errorf("could not write the summary: %w", err)
	}
	printTable(e.stdout, sum)
	fmt.Fprintf(e.stdout, "summary: %s\n", path)
	return sum.ExitCode(false), nil
}

// reproduce is the command line that repeats one run exactly.
func (f *runFlags) reproduce(seed uint64, backend, scenario string) string {
	parts := []string{"storecheck", "run", "--backend", shellQuote(backend), "--scenario", scenario, "--seed", strconv.FormatUint(seed, 10)}
	switch scenario {
	case "conformance":
		parts = append(parts, "--checks", strconv.Itoa(f.checks), "--steps", strconv.Itoa(f.steps))
	default:
		parts = append(parts, "--clients", strconv.Itoa(f.clients), "--executions", strconv.Itoa(f.executions))
		if f.duration > 0 {
			parts = append(parts, "--duration", f.duration.String())
		} else {
			parts = append(parts, "--ops", strconv.Itoa(f.ops))
		}
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == ':' || r == '.' || r == '-' || r == '_' || r == '+' || r == ',' || r == '=' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prepareOut creates the output folder and proves it writable.
func prepareOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("output folder %s cannot be created: %v", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return usagef("output folder %s is not writable: %v", dir, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// embeddedDefault is the backend set that needs no server: the reference
// model, and fresh SQLite and libSQL files in DIR/db.
func embeddedDefault(out string) ([]string, error) {
	dir := filepath.Join(out, "db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("cannot create %s: %v", dir, unwrapPath(err))
	}
	urls := []string{"memory:"}
	for _, name := range []string{"sqlite", "libsql"} {
		path := filepath.Join(dir, name+".db")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
				return nil, usagef("cannot remove the previous %s: %v", path+suffix, unwrapPath(err))
			}
		}
		urls = append(urls, name+":"+path)
	}
	return urls, nil
}
