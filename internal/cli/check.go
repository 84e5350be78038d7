package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/linearizability/leases"
)

// checkUsage is check's synopsis.
const checkUsage = "storecheck check [--out DIR] [--timeout D] HISTORY.jsonl (or - for standard input)"

// checkCommand re-checks a saved history offline: porcupine per execution
// and the global checks, exactly as at the end of a run. It takes both kinds
// of history storecheck writes: an execution store's (history.jsonl) and a
// run store's lease history (history-MODE.jsonl of lease-stall, checkLeases).
// The history "-" is read from standard input. Exit 0 when the history is
// linearizable, 1 when it is not (or the checker timed out), 2 when the
// file is not a history, 130 when interrupted.
func checkCommand(ctx context.Context, e *env, args []string) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	out := fs.String("out", "", "folder for the visualization of a failed check (default: beside the history; for - or another stream, such as a pipe, the current folder)")
	timeout := fs.Duration("timeout", linearizability.DefaultTimeout, "bound on the linearizability search; past it the verdict is Unknown")
	// The history path is positional; flags may come before or after it.
	path, rest := splitPositional(fs, args)
	if err := parseFlagsWith(fs, rest, e.stdout, checkUsage); err != nil {
		return helpOr(err)
	}
	if path == "" {
		return ExitUsage, usageOf(checkUsage)
	}
	if *timeout <= 0 {
		return ExitUsage, usagef("--timeout must be positive, got %v", *timeout)
	}
	if *out != "" {
		// Made only for a failed check, but refused before the check when
		// it cannot be: a file, or under one.
		if info, err := os.Stat(*out); err == nil && !info.IsDir() {
			return ExitUsage, usagef("output folder %s cannot be created: it is a file", *out)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return ExitUsage, usagef("output folder %s cannot be created: %v", *out, unwrapPath(err))
		}
	}
	readStart := time.Now()
	in, remove, err := openInput(ctx, path, e.stdin)
	if ctx.Err() != nil {
		return ExitInterrupted, fmt.Errorf("interrupted while reading the history %s", path)
	}
	if err != nil {
		return ExitUsage, err
	}
	defer remove()
	h, err := linearizability.LoadFile(in.file)
	if errors.Is(err, linearizability.ErrMalformed) {
		// Not an execution-store history: a lease history, or no history.
		ops, lerr := leases.LoadFile(in.file)
		switch {
		case lerr == nil:
			return checkLeases(ctx, e, in, ops, *out, *timeout, time.Since(readStart))
		case errors.Is(lerr, leases.ErrCut):
			// A cut history holds only well-formed lines: the operations
			// it kept would pass.
			return ExitUsage, usagef("not a whole lease history: %s", in.say(lerr))
		case !errors.Is(lerr, leases.ErrNotLeaseHistory):
			return ExitUsage, usagef("not a storecheck lease history: %s", in.say(lerr))
		}
	}
	read := time.Since(readStart)
	if err != nil {
		return ExitUsage, usagef("not a storecheck history: %s", in.say(err))
	}
	if len(h.Ops) == 0 {
		// An empty file, or a run cut short before its first operation, shows
		// nothing: it is not a history that passed.
		return ExitUsage, usagef("%s holds no operations: nothing to check", in.name)
	}
	opt := linearizability.Options{Timeout: *timeout}
	start := time.Now()
	rep, err := linearizability.Check(ctx, h, opt)
	if ctx.Err() != nil {
		// Ctrl-C: a check cut short proves nothing either way.
		return ExitInterrupted, fmt.Errorf("interrupted before the check of %s finished", in.name)
	}
	if err != nil {
		if errors.Is(err, linearizability.ErrMalformed) {
			return ExitUsage, usagef("%s is not a valid history: %s", in.name, in.say(err))
		}
		return ExitUsage, fmt.Errorf("check %s: %w", in.name, err)
	}
	fmt.Fprintf(e.stdout, "%s: %s; %d operations, read in %v, checked in %v\n", in.name, evidence.VerdictOf(rep).Word(), len(h.Ops), read.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	for i, v := range rep.Violations {
		if i == 10 {
			fmt.Fprintf(e.stdout, "  … and %d more\n", len(rep.Violations)-10)
			break
		}
		fmt.Fprintf(e.stdout, "  %s\n", strings.Join(strings.Fields(v.Error()), " "))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "  note: %s\n", n) // what was not checked, and why
	}
	if rep.Verdict == linearizability.Ok {
		return ExitOK, nil
	}
	if rep.Verdict == linearizability.Illegal {
		vis, err := in.visualization(*out)
		if err != nil {
			return ExitUsage, err
		}
		if err := linearizability.VisualizeFile(ctx, vis, h, rep, opt); err != nil {
			return ExitUsage, fmt.Errorf("the history is %s, but its visualization could not be written: %w", rep.Verdict, err)
		}
		fmt.Fprintf(e.stdout, "visualization: %s\n", vis)
	}
	return ExitFail, nil
}

// checkLeases re-checks a lease history (leases.Check), as the lease-stall
// scenario checks it at the end of its run: the stale-token, expired-lease
// and token checks, and porcupine per run against the lease/claim
// register. The scenario's other checks read the store's tables, which the
// file does not hold; a note says so.
func checkLeases(ctx context.Context, e *env, in inputArg, ops []leases.Op, out string, timeout time.Duration, read time.Duration) (int, error) {
	if len(ops) == 0 {
		return ExitUsage, usagef("%s holds no operations: nothing to check", in.name)
	}
	start := time.Now()
	rep := leases.Check(ctx, ops, leases.Options{Timeout: timeout})
	if ctx.Err() != nil {
		return ExitInterrupted, fmt.Errorf("interrupted before the check of %s finished", in.name)
	}
	fmt.Fprintf(e.stdout, "%s: %s; %d operations of a lease history, read in %v, checked in %v\n", in.name, leaseWord(rep), len(ops), read.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	for i, v := range rep.Violations {
		if i == 10 {
			fmt.Fprintf(e.stdout, "  … and %d more\n", len(rep.Violations)-10)
			break
		}
		fmt.Fprintf(e.stdout, "  %s\n", strings.Join(strings.Fields(v.String()), " "))
	}
	for _, n := range append(rep.Notes, "the run's other checks (the store's table invariants, the new holder served) were made at the end of the run, against its database; the history does not hold them") {
		fmt.Fprintf(e.stdout, "  note: %s\n", n)
	}
	switch {
	case rep.Verdict == leases.Ok:
		return ExitOK, nil
	case len(rep.Illegal) == 0:
		return ExitFail, nil
	}
	vis, err := in.visualization(out)
	if err != nil {
		return ExitUsage, err
	}
	var html strings.Builder
	if err := leases.Visualize(&html, rep, rep.Illegal[0]); err != nil {
		return ExitUsage, fmt.Errorf("the history is %s, but its visualization could not be made: %w", rep.Verdict, err)
	}
	if err := os.WriteFile(vis, []byte(html.String()), 0o644); err != nil {
		return ExitUsage, fmt.Errorf("the history is %s, but its visualization could not be written: %w", rep.Verdict, err)
	}
	fmt.Fprintf(e.stdout, "visualization of run %s: %s\n", rep.Illegal[0], vis)
	return ExitFail, nil
}

// leaseWord is a lease check's verdict in the reports' words.
func leaseWord(rep *leases.Report) string {
	switch rep.Verdict {
	case leases.Ok:
		return "PASS (leases: Ok)"
	case leases.Unknown:
		return "FAIL (leases: Unknown: a run could not be decided, nothing is proved)"
	}
	return "FAIL (leases: Illegal)"
}

// splitPositional takes the first argument that is neither a flag of fs nor
// a flag's value out of args, so the positional argument may come before or
// after the flags; after "--" every argument is positional.
func splitPositional(fs *flag.FlagSet, args []string) (string, []string) {
	var rest []string
	path := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			// The flags end here: what follows is positional, even
			// "-h.jsonl". What is not taken stays after a "--" for the
			// next call (merge's shards) or for the flag set to refuse.
			tail := args[i+1:]
			if path == "" && len(tail) > 0 {
				path, tail = tail[0], tail[1:]
			}
			if len(tail) > 0 {
				rest = append(append(rest, "--"), tail...)
			}
			return path, rest
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if path == "" {
				path = a
				continue
			}
			rest = append(rest, a)
			continue
		}
		rest = append(rest, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			rest = append(rest, args[i+1])
			i++
		}
	}
	return path, rest
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
