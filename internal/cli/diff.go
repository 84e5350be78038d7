package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/reports"
)

// diffUsage is diff's synopsis.
const diffUsage = "storecheck diff [--slowdown F] [--rate-rise F] [--md FILE] BASE NEW (each a summary.json, the folder that holds one, or - for standard input)"

// diffCommand compares two summaries, a base (the main branch's stored
// report) and a new one: verdict changes per backend × scenario and
// figures that moved beyond their thresholds, as Markdown for a pull
// request. Exit 1 on any regression. A cell whose runs had another seed or
// other options ran another plan: its figures are shown as not
// comparable, never as regressions, and its verdict is judged as any
// cell's (reports.CompareSummaries).
func diffCommand(_ context.Context, e *env, args []string) (int, error) {
	def := reports.DefaultDiffOptions()
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	slowdown := fs.Float64("slowdown", def.Slowdown, "relative change of throughput or p50/p99 latency that is a regression (0.5 = 50%; negative ignores timings); where the two runs had another seed or other options, or the summaries ran another number of runs at once, a change is shown as not comparable, never a regression")
	rateRise := fs.Float64("rate-rise", def.RateRise, "absolute rise of the conflict or indeterminate rate that is a regression (negative ignores rates); where the two runs had another seed or other options, a rise is shown as not comparable, never a regression")
	md := fs.String("md", "", "also write the Markdown to this file, cut to fit a pull-request comment")
	base, rest := splitPositional(fs, args)
	next, rest := splitPositional(fs, rest)
	if err := parseFlagsWith(fs, rest, e.stdout, diffUsage); err != nil {
		return helpOr(err)
	}
	if base == "" || next == "" {
		return ExitUsage, usageOf(diffUsage)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"slowdown", *slowdown}, {"rate-rise", *rateRise}} {
		// NaN compares false with every change: a gate that never fails.
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return ExitUsage, usagef("--%s must be a finite number (negative ignores these figures), got %v", f.name, f.v)
		}
	}
	if err := onceFromStdin(base, next); err != nil {
		return ExitUsage, err
	}
	if *md == stdinArg {
		// Standard output already carries the whole Markdown; the comment
		// beside it would be a second copy, cut short.
		return ExitUsage, usagef("--md - would print the comment after the diff on standard output: name a file (the diff itself is printed)")
	}
	for _, in := range []string{base, next} {
		if *md != "" && in != stdinArg && samePath(*md, summaryFile(in)) {
			return ExitUsage, usagef("--md %s is the summary diff reads (%s): it would be written over", *md, in)
		}
	}
	if *md != "" {
		if err := canWriteFile(*md); err != nil {
			return ExitUsage, usagef("--md %s cannot be written: %v", *md, err)
		}
	}
	b, baseDir, err := readSummaryAt(base, e.stdin)
	if err != nil {
		return ExitUsage, err
	}
	n, newDir, err := readSummaryAt(next, e.stdin)
	if err != nil {
		return ExitUsage, err
	}
	d := reports.CompareSummaries(b, n, baseDir, newDir, reports.DiffOptions{Slowdown: *slowdown, RateRise: *rateRise})
	d.Base, d.New = base, next
	var text strings.Builder
	if err := d.WriteMarkdown(&text); err != nil {
		return ExitUsage, err
	}
	if _, err := e.stdout.Write([]byte(text.String())); err != nil {
		return ExitUsage, err
	}
	if *md != "" {
		var comment strings.Builder
		if err := d.WriteComment(&comment); err != nil {
			return ExitUsage, err
		}
		if err := os.WriteFile(*md, []byte(comment.String()), 0o644); err != nil {
			return ExitUsage, usagef("cannot write %s: %v", *md, unwrapPath(err))
		}
	}
	if d.Regressions() > 0 {
		return ExitFail, nil
	}
	return ExitOK, nil
}

// summaryFile is the file readSummaryAt reads for path: path itself, or
// the summary.json of the folder path names.
func summaryFile(path string) string {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return filepath.Join(path, "summary.json")
	}
	return path
}

// canWriteFile says why path could not be written as a file, before
// anything is printed: it is a folder, or its folder is missing or not one.
// It makes nothing.
func canWriteFile(path string) error {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return errors.New("it is a folder")
	}
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("its folder %s: %v", dir, unwrapPath(err))
	case !info.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}
