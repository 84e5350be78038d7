package cli

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storecheck/storecheck/internal/load"
	"github.com/storecheck/storecheck/internal/runner"
	"github.com/storecheck/storecheck/reports"
)

// soakCommand measures storecheck's false-alarm rate: every backend given
// (taken to be correct) × every scenario that applies × many seeds, on a
// machine stress-ng loads, and counts every FAIL that is not a known
// upstream issue as a false alarm, with its run folder.
func soakCommand(ctx context.Context, e *env, args []string) (int, error) {
	var (
		m    matrix
		list stringList
		f    soakFlags
		fs   = flag.NewFlagSet("soak", flag.ContinueOnError)
	)
	fs.Var(&list, "backends", "backend URLs believed correct, comma-separated or repeated; "+runner.DirPlaceholder+" in a URL stands for a fresh folder per run (default: the embedded backends, on fresh files)")
	f.register(fs)
	m.register(fs, "scenarios")
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return helpOr(err)
	}
	// Every soak flag is checked before the output folder is made or the
	// load starts.
	if err := f.validate(fs, &m); err != nil {
		return ExitUsage, err
	}
	seeds, kind := f.seeds, f.kind
	urls := splitBackendList(list.values)
	plan, err := m.plan(e, urls) // none: the embedded default, fresh files per run
	if err != nil {
		return ExitUsage, err
	}
	plan.KeepStores = false // hundreds of runs: their files are removed with them
	plan.Entries = overSeeds(plan.Entries, seeds)
	l, err := load.Start(ctx, f.spec())
	if err != nil {
		return ExitUsage, usagef("%v", err)
	}
	defer l.Stop()
	if !m.out.json && !m.out.quiet {
		fmt.Fprintf(e.stderr, "storecheck: soak of %d runs (%d seeds from %d) under load %q\n", len(plan.Entries), seeds, plan.Entries[0].Seed, kind)
	}
	m.out.acceptKnown = true // a known upstream bug is not a false alarm; it is listed
	var soak *reports.Soak
	judge := func(sum *reports.Summary) {
		st, lerr := l.Stop()
		soak = reports.SoakOf(sum, seeds, reports.SoakLoad(st))
		if lerr != nil {
			soak.Notes = append(soak.Notes, lerr.Error())
		}
	}
	write := func(dir string) error {
		if err := reports.WriteSoak(dir, soak); err != nil {
			return fmt.Errorf("the soak report: %w", err)
		}
		return nil
	}
	code, err := executeWith(ctx, e, plan, m.out, notRunPasses, commandLine("soak", args), steps{judge: judge, write: write})
	if err != nil || soak == nil {
		return code, err
	}
	if !m.out.json {
		fmt.Fprintf(e.stdout, "soak: %d runs, %d false alarms, load1 mean %.2f on %d CPUs (%s)\nsoak report: %s\n",
			soak.Runs, len(soak.FalseAlarms), soak.Load.Load1Mean, soak.Load.CPUs, soak.Load.Load, filepath.Join(m.out.dir, reports.SoakMarkdown))
	}
	if code == ExitOK && len(soak.FalseAlarms) > 0 {
		code = ExitFail
	}
	return code, nil
}

// soakFlags are the flags of soak's own, beside the matrix's.
type soakFlags struct {
	seeds int
	kind  string
	cpus  int
	limit time.Duration
}

func (f *soakFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.seeds, "seeds", 20, "seeds per backend × scenario: --seed, --seed+1, …")
	fs.StringVar(&f.kind, "load", "stress-ng", "load on the machine while the runs go: "+strings.Join(load.Kinds, " or "))
	fs.IntVar(&f.cpus, "load-cpus", 0, "stress-ng CPU stressors; 0 (the default): one per CPU")
	fs.DurationVar(&f.limit, "load-limit", 2*time.Hour, "stress-ng's own time limit (whole seconds, rounded up, plus one), a backstop should storecheck die")
}

// validate refuses a soak flag whose value is out of range, or that the
// soak would ignore or replace, so that no given value is silently
// changed: --load-cpus and --load-limit without stress-ng, --shard (the
// seeds multiply the plan after sharding, so no shard of a soak is one of
// the whole), --accept-known=false (a soak always lists known issues
// apart), seeds past the largest one; then what load.Spec.Check refuses
// (stress-ng not installed).
func (f soakFlags) validate(fs *flag.FlagSet, m *matrix) error {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case f.seeds < 1 || f.seeds > maxSoakSeeds:
		return usagef("--seeds must be between 1 and %d, got %d", maxSoakSeeds, f.seeds)
	case !slices.Contains(load.Kinds, f.kind):
		return usagef("unknown load %q (want one of %s)", f.kind, strings.Join(load.Kinds, ", "))
	case f.cpus < 0:
		return usagef("--load-cpus must be 0 (one per CPU) or more, got %d", f.cpus)
	case f.limit <= 0:
		return usagef("--load-limit must be positive, got %v", f.limit)
	case f.kind == "none" && (given["load-cpus"] || given["load-limit"]):
		return usagef("--load-cpus and --load-limit set stress-ng, which --load none does not start")
	case m.shard.s != nil:
		return usagef("soak takes no --shard: split a soak by seeds instead (--seed S --seeds N, then --seed S+N)")
	case given["accept-known"] && !m.out.acceptKnown:
		return usagef("--accept-known=false: a soak always counts a known upstream issue apart from false alarms")
	case m.seed.set && m.seed.value > math.MaxUint64-uint64(f.seeds-1):
		return usagef("--seed %d with --seeds %d goes past the largest seed, %d", m.seed.value, f.seeds, uint64(math.MaxUint64))
	}
	if err := f.spec().Check(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// spec is the load the flags ask for.
func (f soakFlags) spec() load.Spec {
	return load.Spec{Kind: f.kind, CPU: f.cpus, Limit: f.limit, TempDir: os.TempDir()}
}

// maxSoakSeeds bounds a soak's length.
const maxSoakSeeds = 10000

// overSeeds repeats every entry for seeds first, first+1, …, seed-major:
// each seed covers the whole matrix before the next begins, so a soak
// stopped early has covered every pair.
func overSeeds(entries []runner.Entry, seeds int) []runner.Entry {
	out := make([]runner.Entry, 0, len(entries)*seeds)
	for i := range seeds {
		for _, e := range entries {
			e.Seed += uint64(i)
			out = append(out, e)
		}
	}
	return out
}
