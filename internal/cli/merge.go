package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/storecheck/storecheck/reports"
)

// mergeUsage is merge's synopsis.
const mergeUsage = "storecheck merge [--out DIR] [--fail-on-not-run] SHARD… (each a shard's summary.json or its folder)"

// mergeCommand combines the summaries of the N shards of one plan (each
// made with --shard K/N) into the summary of the whole plan, with every
// run's folder copied beside it, and renders the reports as an unsharded
// run would. Its exit code is the whole plan's, under the gate flags given.
func mergeCommand(ctx context.Context, e *env, args []string) (int, error) {
	var (
		o            outputFlags
		failOnNotRun bool
		fs           = flag.NewFlagSet("merge", flag.ContinueOnError)
	)
	o.register(fs)
	fs.BoolVar(&failOnNotRun, "fail-on-not-run", false, "exit 1 when any run is NOT RUN (as the shards' qualify was told)")
	var paths []string
	rest := args
	for {
		var p string
		p, rest = splitPositional(fs, rest)
		if p == "" {
			break
		}
		paths = append(paths, p)
	}
	if err := parseFlagsWith(fs, rest, e.stdout, mergeUsage); err != nil {
		return helpOr(err)
	}
	if len(paths) == 0 {
		return ExitUsage, usageOf(mergeUsage)
	}
	shards := make([]shardSummary, 0, len(paths))
	for _, p := range paths {
		if p == stdinArg {
			return ExitUsage, usagef("merge copies each shard's run folders from beside its summary, and %s has none: give the shard's folder or its summary.json, not -", stdinName)
		}
		s, dir, err := readSummaryAt(p, e.stdin)
		if err != nil {
			return ExitUsage, err
		}
		shards = append(shards, shardSummary{s, dir})
	}
	sum, err := mergeShards(shards)
	if err != nil {
		return ExitUsage, err
	}
	for _, sh := range shards {
		if o.dir != "" && samePath(o.dir, sh.dir) {
			// Each run folder would be copied onto itself: os.Create
			// empties a file before it is read.
			return ExitUsage, usagef("merge never writes over its input: --out %s is the folder of shard %d/%d", o.dir, sh.Shard.K, sh.Shard.N)
		}
		if o.dir != "" && within(filepath.Join(o.dir, "runs"), sh.dir) {
			return ExitUsage, usagef("merge never writes over its input: shard %d/%d is in %s, which the merge empties", sh.Shard.K, sh.Shard.N, filepath.Join(o.dir, "runs"))
		}
	}
	if err := o.resolve(); err != nil {
		return ExitUsage, err
	}
	// As a run does (runner.Execute): the folders of an earlier report in
	// --out go, so that runs/ holds this summary's runs only (resolve made
	// sure it holds nothing but run folders).
	if err := os.RemoveAll(filepath.Join(o.dir, "runs")); err != nil {
		return ExitUsage, fmt.Errorf("empty %s: %w", filepath.Join(o.dir, "runs"), err)
	}
	// A shard's own databases (qualify's default) live in its output
	// folder; in the merged summary they are written under the merged one,
	// as the unsharded run would show them.
	sum.Out = o.dir
	for i, r := range sum.Runs {
		for _, sh := range shards {
			if sh.Out != "" && sh.Shard.Holds(r.Index) {
				sum.Runs[i].Backend = strings.ReplaceAll(r.Backend, sh.Out, o.dir)
				sum.Runs[i].Reproduce = strings.ReplaceAll(r.Reproduce, sh.Out, o.dir)
			}
		}
	}
	for _, sh := range shards {
		for _, r := range sh.Runs {
			if r.Dir == "" {
				continue
			}
			if err := copyTree(ctx, filepath.Join(sh.dir, r.Dir), filepath.Join(o.dir, r.Dir)); err != nil {
				if ctx.Err() != nil {
					return ExitInterrupted, fmt.Errorf("interrupted while copying the runs' folders into %s: no merged summary was written", o.dir)
				}
				return ExitUsage, fmt.Errorf("copy the folder of run %d (%s): %w", r.Index, r.Dir, err)
			}
		}
	}
	sum.Command = commandLine("merge", args)
	sum.Finish(build(), host(), time.Now())
	rule := notRunPasses
	if failOnNotRun {
		rule = notRunFails
	} else if sh := failedOnNotRun(shards); sh != nil {
		// The merged gate is no weaker than a shard's: a shard whose own
		// gate failed on a NOT RUN was told to (--fail-on-not-run, or run's
		// rule), and the merge is its report.
		fmt.Fprintf(e.stderr, "storecheck merge: shard %d/%d failed its gate on a NOT RUN (%s): merging under --fail-on-not-run\n", sh.Shard.K, sh.Shard.N, sh.Gate.Headline)
		rule = notRunFails
	}
	sum.Judge(reports.Policy{NotRun: rule, AcceptKnown: o.acceptKnown})
	code := sum.Gate.ExitCode
	path := filepath.Join(o.dir, "summary.json")
	if err := reports.WriteJSON(path, sum); err != nil {
		return ExitUsage, fmt.Errorf("could not write the summary: %w", err)
	}
	if err := e.renderReports(o.dir); err != nil {
		return ExitUsage, fmt.Errorf("summary.json is written, but the reports could not be rendered: %w", err)
	}
	// Only now is the report whole: latest moves to it.
	if err := o.publish(); err != nil {
		return ExitUsage, err
	}
	if !o.json {
		printTable(e.stdout, sum)
		fmt.Fprintf(e.stdout, "summary: %s\nreport:  %s\n", path, filepath.Join(o.dir, "index.html"))
	} else {
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return ExitUsage, fmt.Errorf("encode summary: %w", err)
		}
		fmt.Fprintln(e.stdout, string(b))
	}
	return code, nil
}

// shardSummary is one shard's summary and the folder it was read from.
type shardSummary struct {
	*reports.Summary
	dir string
}

// mergeShards checks that the summaries are the N distinct shards of one
// plan (same N, plan size, seed and plan digest; a shard without a digest
// is refused) and returns the whole plan's summary: every run in plan
// order, the earliest start.
func mergeShards(shards []shardSummary) (*reports.Summary, error) {
	first := shards[0]
	if first.Shard == nil {
		return nil, usagef("%s is not a shard's summary (made without --shard K/N)", first.dir)
	}
	n, plan := first.Shard.N, first.Shard.Plan
	seen := map[int]string{}
	out := &reports.Summary{Seed: first.Seed, Started: first.Started}
	for _, sh := range shards {
		switch {
		case sh.Shard == nil:
			return nil, usagef("%s is not a shard's summary (made without --shard K/N)", sh.dir)
		case sh.Shard.N != n || sh.Shard.Plan != plan:
			return nil, usagef("%s is shard %d/%d of a %d-run plan, %s shard %d/%d of a %d-run plan: not one plan",
				sh.dir, sh.Shard.K, sh.Shard.N, sh.Shard.Plan, first.dir, first.Shard.K, n, plan)
		case sh.Seed != first.Seed:
			return nil, usagef("%s has seed %d, %s seed %d: not one plan", sh.dir, sh.Seed, first.dir, first.Seed)
		case sh.Shard.PlanDigest == "":
			return nil, usagef("%s records no plan digest (made by a storecheck before shards recorded their plan): it cannot be shown to be a shard of one plan with the others; run the shards again", sh.dir)
		case sh.Shard.PlanDigest != first.Shard.PlanDigest:
			return nil, usagef("%s and %s are shards of different plans (other backends, scenarios or options; plan digests %.12s… and %.12s…)",
				sh.dir, first.dir, sh.Shard.PlanDigest, first.Shard.PlanDigest)
		case seen[sh.Shard.K] != "":
			return nil, usagef("shard %d/%d given twice (%s and %s)", sh.Shard.K, n, seen[sh.Shard.K], sh.dir)
		}
		for _, r := range sh.Runs {
			if r.Dir != "" && !filepath.IsLocal(r.Dir) {
				return nil, usagef("%s: run %d's folder %q is not inside the shard's folder: not copied", sh.dir, r.Index, r.Dir)
			}
		}
		seen[sh.Shard.K] = sh.dir
		if !sh.Started.IsZero() && (out.Started.IsZero() || sh.Started.Before(out.Started)) {
			out.Started = sh.Started
		}
		out.Runs = append(out.Runs, sh.Runs...)
	}
	out.Parallel = first.Parallel
	for _, sh := range shards {
		if sh.Parallel == nil || first.Parallel == nil || *sh.Parallel != *first.Parallel {
			out.Parallel = nil // the shards differ: the whole plan has no one setting
		}
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if seen[k] == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return nil, usagef("shards missing: %s", strings.Join(missing, ", "))
	}
	sort.SliceStable(out.Runs, func(i, j int) bool { return out.Runs[i].Index < out.Runs[j].Index })
	if len(out.Runs) != plan {
		return nil, usagef("the shards hold %d runs, the plan %d", len(out.Runs), plan)
	}
	for i, r := range out.Runs {
		if r.Index != i+1 {
			return nil, usagef("run %d of the plan is missing or given twice (found position %d)", i+1, r.Index)
		}
	}
	return out, nil
}

// failedOnNotRun is the first shard whose gate, worked out under a rule
// that fails a NOT RUN, failed while it held one, or nil.
func failedOnNotRun(shards []shardSummary) *shardSummary {
	for i, sh := range shards {
		if g := sh.Gate; g != nil && g.FailsOnNotRun && g.ExitCode != reports.ExitPassed && sh.CouldNotRun() != nil {
			return &shards[i]
		}
	}
	return nil
}

// within reports whether path is dir or inside it, both made absolute
// (links are not followed).
func within(dir, path string) bool {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// copyTree copies the folder src to dst; it stops, with ctx's error, once
// ctx is done.
func copyTree(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err // Ctrl-C: a run's folder can be hundreds of MB
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // sockets, links: not evidence
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
