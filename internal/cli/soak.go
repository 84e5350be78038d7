package cli

import (
	"context"
	"flag"
	"fmt"
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
		m      matrix
		list   stringList
		seeds  int
		kind   string
		cpus   int
		budget time.Duration
		fs     = flag.NewFlagSet("soak", flag.ContinueOnError)
	)
	fs.Var(&list, "backends", "backend URLs believed correct, comma-separated or repeated; "+runner.DirPlaceholder+" in a URL stands for a fresh folder per run (default: the embedded backends, on fresh files)")
	fs.IntVar(&seeds, "seeds", 20, "seeds per backend × scenario: --seed, --seed+1, …")
	fs.StringVar(&kind, "load", "stress-ng", "load on the machine while the runs go: "+strings.Join(load.Kinds, " or "))
	fs.IntVar(&cpus, "load-cpus", 0, "stress-ng CPU stressors (default: one per CPU)")
	fs.DurationVar(&budget, "load-limit", 2*time.Hour, "stress-ng's own time limit, a backstop should storecheck die")
	m.register(fs, "scenarios")
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return helpOr(err)
	}
	if seeds < 1 || seeds > maxSoakSeeds {
		return ExitUsage, usagef("--seeds must be between 1 and %d, got %d", maxSoakSeeds, seeds)
	}
	if !slices.Contains(load.Kinds, kind) {
		return ExitUsage, usagef("unknown load %q (want one of %s)", kind, strings.Join(load.Kinds, ", "))
	}
	urls := splitBackendList(list.values)
	plan, err := m.plan(e, urls) // none: the embedded default, fresh files per run
	if err != nil {
		return ExitUsage, err
	}
	plan.KeepStores = false // hundreds of runs: their files are removed with them
	plan.Entries = overSeeds(plan.Entries, seeds)
	l, err := load.Start(ctx, load.Spec{Kind: kind, CPU: cpus, Limit: budget, TempDir: os.TempDir()})
	if err != nil {
		return ExitUsage, usagef("%v", err)
	}
	defer l.Stop()
	if !m.out.json && !m.out.quiet {
		fmt.Fprintf(e.stderr, "storecheck: soak of %d runs (%d seeds from %d) under load %q\n", len(plan.Entries), seeds, plan.Entries[0].Seed, kind)
	}
	m.out.acceptKnown = true // a known upstream bug is not a false alarm; it is listed
	var soak *reports.Soak
	code, err := executeThen(ctx, e, plan, m.out, notRunPasses, "storecheck soak "+strings.Join(args, " "), func(sum *reports.Summary) {
		st, lerr := l.Stop()
		soak = reports.SoakOf(sum, seeds, reports.SoakLoad(st))
		if lerr != nil {
			soak.Notes = append(soak.Notes, lerr.Error())
		}
	})
	if err != nil || soak == nil {
		return code, err
	}
	if werr := reports.WriteSoak(m.out.dir, soak); werr != nil {
		return ExitUsage, fmt.Errorf("the runs finished, but the soak report could not be written: %w", werr)
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
