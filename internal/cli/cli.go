// Package cli is the storecheck command line. Main is the whole program; the
// binary in cmd/storecheck only wires it to the process, so tests can run any
// command line in-process and check its exit code and output.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/storecheck/storecheck/internal/procgc"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/worker"
)

// Exit codes: a gate's (reports.Decide), and bad usage.
const (
	ExitOK    = reports.ExitPassed // every run passed
	ExitFail  = reports.ExitFailed // a check failed (or a gate's condition was not met)
	ExitUsage = 2                  // bad usage or a harness error; for run and replay also a run that could not happen (reports.ExitCouldNotRun)
)

// usageError is bad input: one line on stderr and exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) (int, error)
	// gc is what the command's process does, as far as its garbage
	// collector is concerned (GCProfile): procgc.Scenarios for one that
	// lives for seconds or minutes, busy on its cores throughout;
	// procgc.Check for one that checks a saved history.
	gc procgc.Profile
}

// env is what every command reads from and writes to.
type env struct {
	// stdin is read for the file argument "-" (stdinArg).
	stdin          io.Reader
	stdout, stderr io.Writer
	// render renders the reports beside a summary.json; nil is
	// reports.Render (a test gives one that fails).
	render func(dir string) error
}

// renderReports writes index.html, summary.md and junit.xml beside
// dir/summary.json.
func (e *env) renderReports(dir string) error {
	if e.render != nil {
		return e.render(dir)
	}
	return reports.Render(dir)
}

func commands() []command {
	return []command{
		{"run", "run scenarios against backends and write DIR/summary.json", runCommand, procgc.Scenarios},
		{"qualify", "run the backend × scenario matrix a release is qualified on, and render the reports", qualifyCommand, procgc.Scenarios},
		{"check", "re-check a saved history offline (exit 1 when it is not linearizable)", checkCommand, procgc.Check},
		{"replay", "re-run one run of a summary.json from its seed, backend, scenario and options", replayCommand, procgc.Scenarios},
		{"scenarios", "list the scenarios, one line each", scenariosCommand, procgc.Defaults},
		{"backends", "list the backend URL forms, one line each", backendsCommand, procgc.Defaults},
		{"merge", "combine the summaries of the N shards of one plan (--shard K/N) into the whole plan's summary and reports", mergeCommand, procgc.Defaults},
		{"diff", "compare two summaries (BASE NEW): verdict changes per backend × scenario and figures beyond their thresholds, as Markdown; exit 1 on a regression", diffCommand, procgc.Defaults},
		{"soak", "measure false alarms: backends believed correct × scenarios × many seeds on a machine stress-ng loads; exit 1 on any false alarm", soakCommand, procgc.Scenarios},
		{"version", "print storecheck's version, VCS revision and Go version", versionCommand, procgc.Defaults},
		{"mutants", "run the catalogue of deliberately broken stores; exit 1 if one survives or a correct backend is flagged", mutantsCommand, procgc.Scenarios},
		{worker.Arg, "", workerCommand, procgc.Scenarios}, // hidden: the processes scenarios start, kill and stop
	}
}

// GCProfile says what the command line args (without the program name)
// has its process do, so that the program can set its garbage collector
// for it: procgc.Scenarios for run, qualify, replay, soak, mutants and a
// worker process a scenario started; procgc.Check for check; Go's
// defaults for the rest.
func GCProfile(args []string) procgc.Profile {
	if len(args) == 0 {
		return procgc.Defaults
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.gc
		}
	}
	return procgc.Defaults
}

// Main runs one storecheck command line, with the process's standard
// input, and returns the exit code.
//
// The subcommands are dispatched by cobra (github.com/spf13/cobra, as
// etcdctl, kubectl and gh are), which also writes the shell completion
// scripts (storecheck completion bash|zsh|fish|powershell) and answers
// them; each subcommand parses its own flags with the standard library's
// flag package, so that its -h, its errors and its exit codes stay its
// own.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return MainIO(ctx, args, os.Stdin, stdout, stderr)
}

// MainIO is Main with the standard input given: what a command reads for
// the file argument "-".
func MainIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		// Bad usage: the list of commands is the error, on stderr.
		printUsage(stderr)
		return ExitUsage
	}
	if len(args) > 2 && args[0] == "help" {
		fmt.Fprintf(stderr, "storecheck help: unexpected argument %q (storecheck help COMMAND)\n", args[2])
		return ExitUsage
	}
	if len(args) == 2 && args[0] == "help" {
		// help CMD is CMD -h.
		args = []string{args[1], "-h"}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		return ExitOK
	}
	root, code := rootCommand(e)
	if !dispatches(root, args[0]) {
		fmt.Fprintf(stderr, "storecheck: unknown command %q (run 'storecheck help' for the list)\n", args[0])
		return ExitUsage
	}
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "storecheck %s: %s\n", args[0], reports.Scrub(oneLine(err), args...))
		return ExitUsage
	}
	return *code
}

// rootCommand is the cobra command tree: every subcommand of commands(),
// and cobra's completion command. The exit code of the subcommand that
// ran is left in *code.
func rootCommand(e *env) (*cobra.Command, *int) {
	code := new(int)
	root := &cobra.Command{Use: "storecheck", SilenceUsage: true, SilenceErrors: true}
	for _, c := range commands() {
		root.AddCommand(&cobra.Command{
			Use: c.name, Short: c.summary, Hidden: c.summary == "",
			// The subcommand parses its own flags (and -h).
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				*code = invoke(cmd.Context(), e, c, args)
				return nil
			},
			ValidArgsFunction: completeArgs(c),
		})
	}
	// Before requireShell: cobra's completion command keeps the writer
	// it is made with.
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	requireShell(root)
	return root, code
}

// dispatches says whether root has a command named name (cobra's own
// completion commands included).
func dispatches(root *cobra.Command, name string) bool {
	if name == cobra.ShellCompRequestCmd || name == cobra.ShellCompNoDescRequestCmd || name == "completion" {
		return true
	}
	for _, c := range root.Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// invoke runs c and turns its error into one line on stderr and its
// exit code.
func invoke(ctx context.Context, e *env, c command, args []string) int {
	code, err := c.run(ctx, e, args)
	if err != nil {
		// An error may quote a backend URL of args, or part of one.
		fmt.Fprintf(e.stderr, "storecheck %s: %s\n", c.name, reports.Scrub(oneLine(err), args...))
		var u usageError
		if errors.As(err, &u) || code == ExitOK {
			return ExitUsage
		}
	}
	return code
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: storecheck COMMAND [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		if c.summary == "" {
			continue // hidden
		}
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "completion", "print the shell completion script: "+completionUsage)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'storecheck COMMAND -h' for a command's flags.")
}

// commandLine is the command line a summary records: args as given, any
// secret of a backend URL among them scrubbed (reports.Scrub).
func commandLine(name string, args []string) string {
	return reports.Scrub("storecheck "+name+" "+strings.Join(args, " "), args...)
}

// oneLine keeps an error message to one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
