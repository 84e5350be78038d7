package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/storecheck/storecheck/internal/mutantrun"
	"github.com/storecheck/storecheck/reports"
)

// mutantsFlags are the flags of `storecheck mutants`.
type mutantsFlags struct {
	budget   time.Duration
	seed     seedFlag
	out      string
	only     stringList
	parallel int
	quiet    bool
}

func (f *mutantsFlags) register(fs *flag.FlagSet) {
	f.only.split = true
	fs.DurationVar(&f.budget, "budget", mutantrun.DefaultBudget, "time bound of each run (one backend × one scenario)")
	fs.Var(&f.seed, "seed", "base seed; each scenario's seed is derived from it and printed (default: a fresh one)")
	fs.StringVar(&f.out, "out", "storecheck-mutants", "output folder (DIR); mutants.json and summary.json are written there")
	fs.Var(&f.only, "only", "catalogue entries to run, comma-separated or repeated (default: every mutant and every correct backend)")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the table and where the reports are: no seed line, no progress")
	// One run per CPU, as for a plan: a conformance or concurrent run of
	// the catalogue keeps about one core busy (CPU 1.1 times the wall time,
	// one at a time), and conformance runs go side by side since they share
	// rapid's settings but the seed. With two runs at once on two CPUs every
	// mutant was caught over twelve seeds, and the concurrent-only catches
	// held (docs/PERFORMANCE.md and DETECTION.md, twenty-fifth session);
	// times to catch are then those of a shared machine, and the table
	// says so.
	fs.IntVar(&f.parallel, "parallel", defaultParallel(), "runs at once: different catalogue entries side by side, each entry's scenarios in order, the timed ones (crash-recovery, power-loss) one at a time after them; times to catch are then those of a shared machine (the table says how many went at once); the default is one per CPU")
}

// mutantsCommand runs the catalogue of broken stores and the correct
// backends through the scenarios, prints which check caught each, and exits
// 1 when a mutant survives or a correct backend is flagged, or 130
// (ExitInterrupted, as run and qualify) when stopped by Ctrl-C.
func mutantsCommand(ctx context.Context, e *env, args []string) (int, error) {
	var f mutantsFlags
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	f.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		if err == errHelp {
			return ExitOK, nil
		}
		return ExitUsage, err
	}
	if f.budget <= 0 {
		return ExitUsage, usagef("--budget must be positive, got %v", f.budget)
	}
	if f.parallel < 1 {
		return ExitUsage, usagef("--parallel %d: want 1 or more runs at once", f.parallel)
	}
	subjects := mutantrun.Subjects()
	if len(f.only.values) > 0 {
		var err error
		if subjects, err = mutantrun.Select(subjects, f.only.values); err != nil {
			return ExitUsage, usagef("--only: %v", err)
		}
	}
	if err := prepareOut(f.out); err != nil {
		return ExitUsage, err
	}
	seed := f.seed.resolve()
	r := mutantrun.Runner{Subjects: subjects, Seed: seed, Budget: f.budget, OutDir: f.out, Parallel: f.parallel}
	if !f.quiet {
		r.Progress = func(s mutantrun.Subject, res mutantrun.RunResult) {
			fmt.Fprintf(e.stderr, "storecheck: %s (%s) %s, seed %d: %s (%d ops, %v)\n",
				s.Name, s.Kind, res.Scenario, res.Seed, res.Verdict, res.Ops, res.Time.Round(time.Millisecond))
		}
	}
	scs, err := mutantrun.DefaultScenarios()
	if err != nil {
		return ExitUsage, err
	}
	var derived []string
	for _, sc := range scs {
		derived = append(derived, fmt.Sprintf("%s %d", sc.Name, mutantrun.DeriveSeed(seed, sc.Name)))
	}
	if !f.quiet {
		fmt.Fprintf(e.stderr, "storecheck: seed %d (repeat with --seed %d); run seeds: %s\n", seed, seed, strings.Join(derived, ", "))
	}
	r.Scenarios = scs
	table, _, err := r.Run(ctx)
	if err != nil {
		return ExitUsage, err
	}
	table.Pass()
	if err := reports.WriteJSON(filepath.Join(f.out, mutantsFile), table); err != nil {
		return ExitUsage, fmt.Errorf("could not write the table: %w", err)
	}
	sum := table.Summary(commandLine("mutants", args))
	sum.Finish(build(), host(), time.Now())
	// The catalogue's verdict, which the exit code follows: every mutant
	// caught (its runs FAIL) and no correct backend flagged is a PASS; a
	// subject whose runs were interrupted has no outcome (INTERRUPTED).
	sum.Verdict = table.Verdict()
	if ctx.Err() != nil {
		sum.Gate.ExitCode = ExitInterrupted
	}
	if err := reports.WriteJSON(filepath.Join(f.out, "summary.json"), sum); err != nil {
		return ExitUsage, fmt.Errorf("could not write the summary: %w", err)
	}
	if err := table.Write(e.stdout); err != nil {
		return ExitUsage, err
	}
	if err := e.renderReports(f.out); err != nil {
		return ExitUsage, fmt.Errorf("the catalogue ran and summary.json is written, but the reports could not be rendered: %w", err)
	}
	fmt.Fprintf(e.stdout, "table: %s\nsummary: %s\nreport:  %s\n", filepath.Join(f.out, mutantsFile), filepath.Join(f.out, "summary.json"), filepath.Join(f.out, "index.html"))
	if sum.Gate.ExitCode == ExitInterrupted {
		fmt.Fprintln(e.stderr, "storecheck: interrupted; the table marks the subjects left without an outcome INTERRUPTED")
	}
	return sum.Gate.ExitCode, nil
}
