package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// run runs one command line in-process.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// Every kind of bad input gets one clear line on stderr and exit 2, and
// leaves no summary claiming anything.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown backend", []string{"run", "--backend", "nope:", "--out", dir}, `unknown backend "nope:" (known: memory`},
		{"backend without scheme", []string{"run", "--backend", "x.db", "--out", dir}, "has no scheme"},
		{"missing directory", []string{"run", "--backend", "sqlite:/nonexistent/dir/x.db", "--out", dir}, `directory "/nonexistent/dir" does not exist`},
		{"unknown scenario", []string{"run", "--scenario", "nope", "--out", dir}, `unknown scenario "nope" (known:`},
		{"bad flag", []string{"run", "--frob"}, "flag provided but not defined: -frob"},
		{"bad seed", []string{"run", "--seed", "x"}, `seed must be an integer from 1 to 18446744073709551615, got "x"`},
		{"zero seed", []string{"run", "--seed", "0"}, `seed must be an integer from 1 to 18446744073709551615, got "0"`},
		{"negative seed", []string{"run", "--seed", "-3"}, `seed must be an integer from 1 to 18446744073709551615, got "-3"`},
		{"seed past 2^64-1", []string{"run", "--seed", "99999999999999999999999"}, `seed must be an integer from 1 to 18446744073709551615, got "99999999999999999999999"`},
		{"seed of qualify past 2^64-1", []string{"qualify", "--seed", "18446744073709551616"}, "seed must be an integer from 1 to 18446744073709551615"},
		{"seed of mutants past 2^64-1", []string{"mutants", "--seed", "18446744073709551616"}, "seed must be an integer from 1 to 18446744073709551615"},
		{"bad checks", []string{"run", "--checks", "0", "--out", dir}, "--checks must be at least 1"},
		{"stray argument", []string{"run", "extra"}, `unexpected argument "extra"`},
		{"unwritable output", []string{"run", "--out", filepath.Join(file, "sub")}, "output folder"},
		// An empty value is a mistake (an unset variable in a CI script),
		// never a way to ask for the default.
		{"empty --out of run", []string{"run", "--backend", "memory:", "--scenario", "conformance", "--out", ""}, `--out "" names nothing`},
		{"empty --out of qualify", []string{"qualify", "--out", " "}, `--out " " names nothing`},
		{"empty --out of mutants", []string{"mutants", "--out", ""}, `--out "" names nothing`},
		{"empty --out of check", []string{"check", "--out", "", file}, `--out "" names nothing`},
		{"empty --md of diff", []string{"diff", "--md", "", dir, dir}, `--md "" names nothing`},
		{"empty --backend of replay", []string{"replay", "--backend", "", dir}, `--backend "" names nothing`},
		{"empty --rqlited", []string{"qualify", "--rqlited", "", "--out", dir}, `--rqlited "" names nothing`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != ExitUsage {
				t.Errorf("exit code: want %d, got %d", ExitUsage, code)
			}
			if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 {
				t.Errorf("want one line on stderr, got:\n%s", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not say %q", stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
				t.Errorf("bad input left a summary.json behind")
			}
		})
	}
}

// storecheck backends prints aligned columns: every example starts at the
// same column; help CMD is CMD -h.
func TestBackendsColumnsAndHelpCommand(t *testing.T) {
	_, stdout, _ := run(t, "backends")
	col := -1
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		name, _, _ := strings.Cut(line, " ")
		at := strings.Index(line, name+":")
		if at <= 0 {
			t.Fatalf("line %q has no example of its scheme", line)
		}
		if col == -1 {
			col = at
		}
		if at != col {
			t.Errorf("example of %s at column %d, others at %d", name, at, col)
		}
	}
	if code, stdout, _ := run(t, "help", "run"); code != ExitOK || !strings.HasPrefix(stdout, "usage: storecheck run") {
		t.Errorf("help run: exit %d, %q", code, stdout)
	}
}

func TestHelpAndLists(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"run", "-h"}, {"scenarios"}, {"backends"}} {
		code, stdout, _ := run(t, args...)
		if code != ExitOK || stdout == "" {
			t.Errorf("%v: want exit 0 and output, got %d and %q", args, code, stdout)
		}
	}
	_, stdout, _ := run(t, "scenarios")
	for _, name := range []string{"conformance", "concurrent"} {
		if !strings.Contains(stdout, name) {
			t.Errorf("storecheck scenarios does not list %s:\n%s", name, stdout)
		}
	}
}

// The same seed gives the same sequence: the rapid logs of two runs on the
// same SQLite file are identical, and the summaries agree.
func TestRunIsReproducible(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "x.db")
	logs := make([]string, 2)
	for i := range logs {
		out := filepath.Join(dir, "out", string(rune('a'+i)))
		code, stdout, stderr := run(t, "run", "--backend", db, "--scenario", "conformance", "--seed", "7", "--checks", "10", "--out", out)
		if code != ExitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		if !strings.Contains(stderr, "seed 7") {
			t.Errorf("run %d does not print its seed: %s", i, stderr)
		}
		sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Runs) != 1 || sum.Runs[0].Verdict != reports.Pass || sum.Seed != 7 || sum.Runs[0].Ops == 0 {
			t.Fatalf("summary: %+v", sum)
		}
		if !strings.Contains(sum.Runs[0].Reproduce, "--seed 7") {
			t.Errorf("reproduce command lacks the seed: %s", sum.Runs[0].Reproduce)
		}
		logs[i] = sum.Runs[0].SequenceDigest
	}
	if logs[0] != logs[1] || logs[0] == "" {
		t.Fatalf("two runs with --seed 7 ran different sequences: digests %q and %q", logs[0], logs[1])
	}
	code, _, stderr := run(t, "run", "--backend", db, "--scenario", "conformance", "--seed", "8", "--checks", "10", "--out", filepath.Join(dir, "out", "c"))
	sum, err := reports.ReadSummary(filepath.Join(dir, "out", "c", "summary.json"))
	if code != ExitOK || err != nil {
		t.Fatalf("seed 8: exit %d, %v: %s", code, err, stderr)
	}
	if sum.Runs[0].SequenceDigest == logs[0] {
		t.Fatalf("seeds 7 and 8 ran the same sequence: the digest proves nothing")
	}
}

func TestSummaryIsValidJSON(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, "run", "--backend", "memory:", "--seed", "3", "--checks", "5", "--ops", "200", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	applicable := 0
	memory, err := scenarios.TargetFor("memory:")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios.All() {
		if ok, _ := sc.Applies(memory.Target); ok {
			applicable++
		}
	}
	runs, _ := v["runs"].([]any)
	if applicable < 2 || len(runs) != applicable {
		t.Fatalf("want a run per scenario that applies to memory: (%d), got %d: %v", applicable, len(runs), v["runs"])
	}
	// A scenario asked for by name that does not apply is listed NOT RUN, with the reason.
	code, _, stderr = run(t, "run", "--backend", "memory:", "--scenario", "lease-stall", "--seed", "3", "--out", out)
	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil || code != ExitUsage || len(sum.Runs) != 1 || sum.Runs[0].Verdict != reports.NotRun || !strings.Contains(sum.Runs[0].Reason, "does not apply") || !strings.Contains(stderr, "NOT RUN") {
		t.Fatalf("a named scenario that does not apply: exit %d, %v, %+v: %s", code, err, sum, stderr)
	}
}

// --out names a folder of the user's: storecheck empties its runs/ before
// the runs start, so a runs/ that holds anything but the run folders
// (NN-…) of an earlier storecheck report is refused, untouched, before
// anything runs; a report's own folder is reused as before.
func TestOutKeepsAForeignRunsFolder(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "runs", "mine", "data.txt")
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("not storecheck's"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"run", "qualify"} {
		code, _, stderr := run(t, cmd, "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "1", "--out", dir)
		if code != ExitUsage || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.Contains(stderr, "runs/mine") {
			t.Errorf("%s --out DIR with a foreign DIR/runs: exit %d, stderr %q; want exit %d and one line naming runs/mine", cmd, code, stderr, ExitUsage)
		}
		if _, err := os.Stat(kept); err != nil {
			t.Fatalf("%s --out DIR removed %s: %v", cmd, kept, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
			t.Fatalf("%s --out DIR refused but left a summary.json", cmd)
		}
	}

	// A report's folder is reused: its runs/ is storecheck's own.
	report := t.TempDir()
	for range 2 {
		if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "1", "--out", report); code != ExitOK {
			t.Fatalf("run into a report's folder: exit %d: %s", code, stderr)
		}
	}
}

// TestNoCommandIsUsageOnStderr: storecheck without a command is bad usage:
// the list of commands goes to stderr with exit 2, stdout stays empty (a
// script reading it got the usage as output); help with more than one
// command is refused, not answered with the general usage and exit 0.
func TestNoCommandIsUsageOnStderr(t *testing.T) {
	code, stdout, stderr := run(t)
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "usage: storecheck COMMAND") {
		t.Errorf("no command: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "help", "run", "extra")
	if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, `"extra"`) {
		t.Errorf("help run extra: exit %d, stdout %q, stderr %q; want 2 and one line naming the extra argument", code, stdout, stderr)
	}
}
