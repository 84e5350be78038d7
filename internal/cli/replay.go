package cli

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storecheck/storecheck/internal/runner"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// replayUsage is replay's synopsis.
const replayUsage = "storecheck replay [--run N] [--scenario S] [--backend URL] [--out DIR] SUMMARY (a summary.json, the folder that holds one, or - for standard input)"

// replayCommand re-runs one run of a summary.json (or of the folder that
// holds one, as diff and merge take it): the same backend,
// scenario, seed and options. The run is chosen by its position (--run N,
// from 1) or by --scenario and --backend; a summary with one run needs
// neither. --scenario is always a filter: with --run, the run at that
// position must be of that scenario. --backend, with --run, is the URL to
// run it on instead of the summary's (a URL the summary redacted, or a fresh
// database file); without --run, it chooses the run by its URL and runs it
// there.
func replayCommand(ctx context.Context, e *env, args []string) (int, error) {
	var (
		out      outputFlags
		index    int
		scenario string
		backend  string
		fs       = flag.NewFlagSet("replay", flag.ContinueOnError)
	)
	fs.IntVar(&index, "run", 0, "the run to replay, by its number in the report (from 1; NN of its folder runs/NN-…, on a shard's summary its position in the whole plan)")
	fs.StringVar(&scenario, "scenario", "", "the run to replay, by scenario (with --run: the scenario the run must be of)")
	fs.StringVar(&backend, "backend", "", "the run to replay, by backend URL, and the URL to run it on (with --run: only the URL to run it on, e.g. one the summary redacted)")
	out.register(fs)
	path, rest := splitPositional(fs, args)
	if err := parseFlagsWith(fs, rest, e.stdout, replayUsage); err != nil {
		return helpOr(err)
	}
	if path == "" {
		return ExitUsage, usageOf(replayUsage)
	}
	if isSet(fs, "run") && index < 1 {
		return ExitUsage, usagef("--run must be at least 1 (a run's position in the summary), got %d", index)
	}
	sum, dir, err := readSummaryAt(path, e.stdin)
	name := path // what messages and the summary's replay line call it
	if path == stdinArg {
		name = stdinName
	}
	if err != nil {
		return ExitUsage, err
	}
	r, n, err := pickRun(sum, index, scenario, backend)
	if err != nil {
		return ExitUsage, err
	}
	if r.Seed == 0 {
		// No run has it (--seed refuses it): the summary was edited.
		return ExitUsage, usagef("run %d of %s has seed 0, which no storecheck run has (seeds are 1 to %d): nothing to replay", n, name, uint64(math.MaxUint64))
	}
	url := r.Backend
	if backend != "" {
		url = backend
	}
	if strings.Contains(url, "REDACTED") {
		return ExitUsage, usagef("the summary's backend URL %s was redacted; pass the real one with --backend", url)
	}
	sc, err := scenarios.Lookup(r.Scenario)
	if err != nil {
		return ExitUsage, usagef("%v", err)
	}
	var k knobs
	fs2 := flag.NewFlagSet("defaults", flag.ContinueOnError)
	k.register(fs2) // defaults, overridden by what the run recorded
	if err := k.fromOptions(r.Options); err != nil {
		return ExitUsage, usagef("run %d of %s %v", n, name, err)
	}
	if err := validateBackends([]string{url}); err != nil {
		return ExitUsage, err
	}
	if out.dir != "" && dir != "" && samePath(out.dir, dir) {
		return ExitUsage, usagef("replay never writes over its input: --out %s is the folder of %s", out.dir, path)
	}
	if err := out.resolve(); err != nil {
		return ExitUsage, err
	}
	announceSeed(e, out, r.Seed)
	plan := runner.Plan{
		Entries: []runner.Entry{{Backend: url, Scenario: sc, Seed: r.Seed}}, Out: out.dir,
		Options: k.options(), Params: k.params(r.Seed), Reproduce: k.reproduce,
	}
	of := fmt.Sprintf("%s#%d", name, n)
	compare := func(got *reports.Summary) {
		if len(got.Runs) == 1 {
			got.Runs[0].CompareReplay(of, r)
			// A note, as the seed line: --quiet and --json print none
			// (the summary and its reports say it).
			if !out.quiet && !out.json {
				fmt.Fprintf(e.stderr, "storecheck: replay of %s: %s\n", of, got.Runs[0].Replay)
			}
		}
	}
	return executeWith(ctx, e, plan, out, notRunIsError, commandLine("replay", args), steps{judge: compare})
}

// pickRun chooses the run to replay and returns it with its number
// (reports.Summary.Position): run number index when given, else the one
// run of scenario and backend (either may be "").
func pickRun(sum *reports.Summary, index int, scenario, backend string) (reports.Run, int, error) {
	if index > 0 {
		return pickIndex(sum, index, scenario)
	}
	var matches []int
	for i, r := range sum.Runs {
		if (scenario == "" || r.Scenario == scenario) && (backend == "" || r.Backend == reports.Redact(backend)) {
			matches = append(matches, i)
		}
	}
	switch {
	case len(matches) == 1:
		return sum.Runs[matches[0]], sum.Position(matches[0]), nil
	case len(matches) == 0:
		return reports.Run{}, 0, usagef("no run in the summary matches --scenario %q --backend %q", scenario, reports.Redact(backend))
	default:
		var ns []string
		for _, i := range matches {
			ns = append(ns, strconv.Itoa(sum.Position(i)))
		}
		return reports.Run{}, 0, usagef("%d runs match (%s); choose one with --run N or --scenario and --backend", len(matches), strings.Join(ns, ", "))
	}
}

// pickIndex is the run numbered index (reports.Summary.Position: on a
// shard's summary, its position in the whole plan), which must be of
// scenario when one is given.
func pickIndex(sum *reports.Summary, index int, scenario string) (reports.Run, int, error) {
	for i, r := range sum.Runs {
		if sum.Position(i) != index {
			continue
		}
		if scenario != "" && r.Scenario != scenario {
			return reports.Run{}, 0, usagef("--run %d is a %s run, not --scenario %s", index, r.Scenario, scenario)
		}
		return r, index, nil
	}
	if sh := sum.Shard; sh != nil && index <= sh.Plan {
		return reports.Run{}, 0, usagef("--run %d: run %d of the plan is in shard %d/%d, and this summary is shard %d/%d's: replay it from that shard's summary or the merged one",
			index, index, (index-1)%sh.N+1, sh.N, sh.K, sh.N)
	}
	if sh := sum.Shard; sh != nil {
		return reports.Run{}, 0, usagef("--run %d: the plan holds %d runs", index, sh.Plan)
	}
	return reports.Run{}, 0, usagef("--run %d: the summary holds %d runs", index, len(sum.Runs))
}

// samePath reports whether a and b name the same folder: the same file
// when both exist (a link such as storecheck-out/latest included), else
// the same absolute path.
func samePath(a, b string) bool {
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && filepath.Clean(aa) == filepath.Clean(bb)
}
