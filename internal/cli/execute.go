package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/storecheck/storecheck/internal/runner"
	"github.com/storecheck/storecheck/reports"
)

// ExitInterrupted is the exit code of a command stopped by Ctrl-C (128 +
// SIGINT, as shells report it).
const ExitInterrupted = reports.ExitInterrupted

// outputFlags say where results go and how much is printed.
type outputFlags struct {
	dir         string
	quiet       bool
	json        bool
	acceptKnown bool
	// latest is dir's name under OutRoot, which OutRoot/latest is to point
	// at once dir holds a whole report (publish); "" with --out.
	latest string
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.dir, "out", "", "output folder (DIR): summary.json, the reports and a folder per run (default: a new folder under "+OutRoot+"/, which "+OutRoot+"/latest points at)")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the verdict table: no progress, seed or other note on stderr (errors and warnings only); the verdict is the exit code")
	fs.BoolVar(&o.json, "json", false, "no progress; print summary.json on stdout instead of the table")
	fs.BoolVar(&o.acceptKnown, "accept-known", false, "a FAIL whose evidence shows a known upstream bug (docs/KNOWN-ISSUES.md) does not fail the exit code; it is still reported")
}

func announceSeed(e *env, o outputFlags, seed uint64) {
	if !o.json && !o.quiet {
		fmt.Fprintf(e.stderr, "storecheck: seed %d (repeat with --seed %d)\n", seed, seed)
	}
}

// What a NOT RUN run does to the exit code (reports.Policy.NotRun).
const (
	notRunPasses  = ""                           // qualify without --fail-on-not-run: shown, exit unaffected
	notRunFails   = reports.NotRunFailsUnderFlag // qualify --fail-on-not-run: exit 1
	notRunIsError = reports.NotRunFailsRun       // run, replay: the run asked for could not happen; exit 2
)

// execute runs the plan, writes summary.json and the reports rendered from
// it, prints the outcome and returns the exit code. An interrupted run still
// writes its summary, with the runs it could not finish marked INTERRUPTED.
func execute(ctx context.Context, e *env, plan runner.Plan, o outputFlags, policy string, command string) (int, error) {
	return executeWith(ctx, e, plan, o, policy, command, steps{})
}

// steps are what a command adds to execute's.
type steps struct {
	// judge runs between the runs and the summary: replay compares its
	// run with the original there, soak counts its false alarms.
	judge func(*reports.Summary)
	// write writes the command's own files beside the reports (soak's
	// report), before latest moves to the folder.
	write func(dir string) error
}

// executeWith is execute with the command's own steps. OutRoot/latest
// moves to the folder (publish) only once every file of its report is
// written: a summary whose reports or own files could not be written
// leaves latest at the last complete report.
func executeWith(ctx context.Context, e *env, plan runner.Plan, o outputFlags, policy string, command string, add steps) (int, error) {
	mode := chooseProgress(e.stderr, o.quiet || o.json)
	started := time.Now().UTC()
	sum := runner.Execute(ctx, plan, newProgress(e.stderr, mode))
	sum.Command, sum.Started, sum.Out = command, started, o.dir
	if add.judge != nil {
		add.judge(sum)
	}
	sum.Finish(build(), host(), time.Now())
	sum.Judge(reports.Policy{NotRun: policy, AcceptKnown: o.acceptKnown, Interrupted: ctx.Err() != nil})
	code := sum.Gate.ExitCode
	path := filepath.Join(o.dir, "summary.json")
	if err := reports.WriteJSON(path, sum); err != nil {
		return ExitUsage, fmt.Errorf("could not write the summary: %w", err)
	}
	renderErr := e.renderReports(o.dir)
	if renderErr == nil && add.write != nil {
		renderErr = add.write(o.dir)
	}
	if o.json {
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return ExitUsage, fmt.Errorf("encode summary: %w", err)
		}
		fmt.Fprintln(e.stdout, string(b))
	} else {
		printTable(e.stdout, sum)
		fmt.Fprintf(e.stdout, "summary: %s\n", path)
		if index := filepath.Join(o.dir, "index.html"); renderErr == nil && fileExists(index) {
			fmt.Fprintf(e.stdout, "report:  %s\n", index)
		}
	}
	if renderErr != nil {
		return ExitUsage, fmt.Errorf("the runs finished and summary.json is written, but the reports could not be written: %w", renderErr)
	}
	if err := o.publish(); err != nil {
		return ExitUsage, err
	}
	if ctx.Err() != nil {
		fmt.Fprintln(e.stderr, "storecheck: interrupted; the summary marks the unfinished runs INTERRUPTED")
		return ExitInterrupted, nil
	}
	if code == reports.ExitCouldNotRun {
		r := sum.CouldNotRun()
		if r == nil { // nothing applied: name the first pair
			r = &sum.Runs[0]
		}
		return ExitUsage, fmt.Errorf("%s on %s: NOT RUN: %s", r.Scenario, r.Backend, r.Reason)
	}
	return code, nil
}

// OutRoot is where results are kept when --out is not given: each
// invocation writes a folder of its own there, and latest points at the
// newest, so that no run replaces another's report.
const OutRoot = "storecheck-out"

// resolve picks the output folder: --out exactly, or a new folder under
// OutRoot named by the time and a random suffix, which OutRoot/latest will
// point at once it holds a whole report (publish). It creates the folder and
// proves it writable.
func (o *outputFlags) resolve() error {
	if o.json && o.quiet {
		// Each names what stdout carries: the summary's JSON or the table.
		return usagef("--json and --quiet both say what stdout carries (the summary's JSON, the table): give one")
	}
	if o.dir != "" {
		return prepareOut(o.dir)
	}
	// latest is replaced once the report is written (publish): what is
	// not a link there would be found only after the runs.
	if info, err := os.Lstat(filepath.Join(OutRoot, "latest")); err == nil && info.Mode()&fs.ModeSymlink == 0 {
		return usagef("%s is not the link storecheck keeps to the newest report (it is a %s): move it away, or give --out", filepath.Join(OutRoot, "latest"), fileKind(info))
	}
	var id [3]byte
	_, _ = rand.Read(id[:])
	name := time.Now().UTC().Format("20060102-150405.000") + "-" + hex.EncodeToString(id[:])
	o.dir = filepath.Join(OutRoot, name)
	if err := prepareOut(o.dir); err != nil {
		return err
	}
	o.latest = name
	return nil
}

// publish points OutRoot/latest at the folder resolve made, once its
// report is whole: summary.json, the reports rendered from it and the
// command's own files. A command that fails before that (a report that
// could not be rendered, a storecheck killed mid-run) leaves latest at the
// last complete report.
// With --out it does nothing.
func (o *outputFlags) publish() error {
	if o.latest == "" {
		return nil
	}
	// A new link renamed over the old one, so that latest is never
	// missing or half-made.
	name := o.latest
	tmp := filepath.Join(OutRoot, ".latest-"+name)
	if err := os.Symlink(name, tmp); err != nil {
		return usagef("output folder %s: cannot link latest: %v", OutRoot, unwrapPath(err))
	}
	if err := os.Rename(tmp, filepath.Join(OutRoot, "latest")); err != nil {
		os.Remove(tmp)
		return usagef("output folder %s: cannot link latest: %v", OutRoot, unwrapPath(err))
	}
	return nil
}

// prepareOut creates the output folder and proves it writable. A runs/
// folder in it must be an earlier report's (see ownRunsFolder): the runs
// empty it before they start. An earlier report's summary and rendered
// files go now (dropEarlierReport).
func prepareOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("output folder %s cannot be created: %v", dir, unwrapPath(err))
	}
	if err := ownRunsFolder(dir); err != nil {
		return err
	}
	probe, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return usagef("output folder %s is not writable: %v", dir, unwrapPath(err))
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return err
	}
	return dropEarlierReport(dir)
}

// reportFiles are the files of a report folder beside runs/: the summary
// last, so that the others never outlive it.
var reportFiles = []string{reports.MarkdownFile, reports.HTMLFile, reports.JUnitFile,
	reports.SoakJSON, reports.SoakMarkdown, mutantsFile, reports.SummaryFile}

// mutantsFile is storecheck mutants' table, beside its summary.
const mutantsFile = "mutants.json"

// dropEarlierReport removes the summary and the rendered files of the
// earlier report in dir, if dir holds one (a storecheck summary.json of
// any schema version: an older storecheck's report claims as much), before
// the runs start and empty its runs/: until this command writes its own,
// the folder claims nothing, so that a storecheck killed mid-run (SIGKILL,
// a CI job's timeout) leaves no verdict of the earlier runs beside the new
// runs' folders. A summary.json that is not storecheck's is left alone.
func dropEarlierReport(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
	if err != nil || !reports.IsSummary(b) {
		return nil
	}
	for _, f := range reportFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return usagef("output folder %s: cannot remove the earlier report's %s: %v", dir, f, unwrapPath(err))
		}
	}
	return nil
}

// runFolderName is the name of a run's folder, NN-BACKEND-SCENARIO
// (runner.Execute).
var runFolderName = regexp.MustCompile(`^[0-9]{2,}-`)

// ownRunsFolder refuses an output folder whose runs/ holds anything but
// run folders: runner.Execute empties runs/ before the runs start, and
// --out may name a folder of the user's that has a runs/ of its own.
func ownRunsFolder(dir string) error {
	entries, err := os.ReadDir(filepath.Join(dir, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usagef("output folder %s: cannot read its runs folder: %v", dir, unwrapPath(err))
	}
	for _, e := range entries {
		if !e.IsDir() || !runFolderName.MatchString(e.Name()) {
			return usagef("output folder %s holds runs/%s, which is not a storecheck run's folder, and storecheck empties runs/ before it starts: give --out a new folder or an earlier report's", dir, e.Name())
		}
	}
	return nil
}

// fileKind names what info describes, for an error: "folder" or "file".
func fileKind(info fs.FileInfo) string {
	if info.IsDir() {
		return "folder"
	}
	return "file"
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// embeddedDefault is the backend set that needs no server: the reference
// model, SQLite and libSQL files, a SQLite run store, and the replica-lag
// simulation (a SQLite primary with lagging replicas). Every run gets fresh
// files of its own, in its run folder's db/, where they stay with its
// evidence (runner.KeepStores): runs that share no file go side by side.
func embeddedDefault() []string {
	return []string{
		"memory:",
		"sqlite:" + runner.DirPlaceholder + "/sqlite.db",
		"libsql:" + runner.DirPlaceholder + "/libsql.db",
		"runs+sqlite:" + runner.DirPlaceholder + "/runs.db",
		"lagsim:" + runner.DirPlaceholder + "/primary.db?lag=200ms",
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
