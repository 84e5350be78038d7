package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

// checkUsage is check's synopsis.
const checkUsage = "storecheck check [--out DIR] [--timeout D] HISTORY.jsonl"

// checkCommand re-checks a saved history offline: porcupine per execution
// and the global checks, exactly as at the end of a run. Exit 0 when the
// history is linearizable, 1 when it is not (or the checker timed out), 2 when
// the file is not a history.
func checkCommand(ctx context.Context, e *env, args []string) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	out := fs.String("out", "", "folder for the visualization of a failed check (default: beside the history)")
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
	readStart := time.Now()
	h, err := linearizability.LoadFile(path)
	read := time.Since(readStart)
	if err != nil {
		return ExitUsage, usagef("not a storecheck history: %v", err)
	}
	if len(h.Ops) == 0 {
		// An empty file, or a run cut short before its first operation, shows
		// nothing: it is not a history that passed.
		return ExitUsage, usagef("%s holds no operations: nothing to check", path)
	}
	opt := linearizability.Options{Timeout: *timeout}
	start := time.Now()
	rep, err := linearizability.Check(ctx, h, opt)
	if err != nil {
		if errors.Is(err, linearizability.ErrMalformed) {
			return ExitUsage, usagef("%s is not a valid history: %v", path, err)
		}
		return ExitUsage, fmt.Errorf("check %s: %w", path, err)
	}
	fmt.Fprintf(e.stdout, "%s: %s; %d operations, read in %v, checked in %v\n", path, evidence.VerdictOf(rep).Word(), len(h.Ops), read.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
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
		dir := *out
		if dir == "" {
			dir = filepath.Dir(path)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return ExitUsage, usagef("output folder %s cannot be created: %v", dir, unwrapPath(err))
		}
		vis := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".visualization.html")
		if err := linearizability.VisualizeFile(ctx, vis, h, rep, opt); err != nil {
			return ExitUsage, fmt.Errorf("the history is %s, but its visualization could not be written: %w", rep.Verdict, err)
		}
		fmt.Fprintf(e.stdout, "visualization: %s\n", vis)
	}
	return ExitFail, nil
}

// splitPositional takes the first argument that is neither a flag of fs nor
// a flag's value out of args, so the positional argument may come before or
// after the flags.
func splitPositional(fs *flag.FlagSet, args []string) (string, []string) {
	var rest []string
	path := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
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
