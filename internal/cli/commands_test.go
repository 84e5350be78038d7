package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/internal/procgc"
	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/worker"
)

// Error paths of qualify, check and replay: one line, exit 2.
func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	malformed := filepath.Join(dir, "bad.jsonl")
	notJSON := filepath.Join(dir, "summary.json")
	metaOnly := filepath.Join(dir, "meta.jsonl")
	// A summary whose run records an option no run has (edited by hand).
	zeroOps := filepath.Join(dir, "zero-ops.json")
	zeroOpsBody := `{"seed":1,"runs":[{"backend":"memory:","scenario":"concurrent","verdict":"PASS","seed":1,"reproduce":"x","duration_ms":1,"ops":1,"options":{"ops":"0"}}]}`
	for path, body := range map[string]string{file: "", malformed: "{\"client\":0,\"kind\":\"commit\"\n", notJSON: "not json", metaOnly: "{\"meta\":{\"trace_max\":10}}\n", zeroOps: zeroOpsBody} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"qualify unknown backend", []string{"qualify", "--backends", "memory:,nope:", "--out", dir}, `unknown backend "nope:"`},
		{"qualify unknown scenario", []string{"qualify", "--scenarios", "conformance,nope", "--out", dir}, `unknown scenario "nope"`},
		{"qualify bad flag", []string{"qualify", "--fail-on-not-run=maybe"}, "invalid boolean value"},
		{"qualify empty backends", []string{"qualify", "--backends", "", "--out", dir}, `"" names nothing`},
		{"qualify backends of commas", []string{"qualify", "--backends", ",", "--out", dir}, `"," names nothing`},
		{"qualify blank scenarios", []string{"qualify", "--scenarios", " ", "--out", dir}, `" " names nothing`},
		{"run empty backend", []string{"run", "--backend", "", "--out", dir}, `"" names nothing`},
		{"run json and quiet", []string{"run", "--backend", "memory:", "--json", "--quiet", "--out", dir}, "--json and --quiet"},
		{"qualify json and quiet", []string{"qualify", "--json", "--quiet", "--out", dir}, "--json and --quiet"},
		{"qualify unwritable output", []string{"qualify", "--out", filepath.Join(file, "x")}, "output folder"},
		{"check without a file", []string{"check"}, "usage: storecheck check"},
		{"check missing file", []string{"check", filepath.Join(dir, "none.jsonl")}, "no such file"},
		{"check malformed history", []string{"check", malformed}, "line 1"},
		{"check empty history", []string{"check", file}, "holds no operations: nothing to check"},
		{"check history of a meta line only", []string{"check", metaOnly}, "holds no operations"},
		{"check bad timeout", []string{"check", "--timeout", "-1s", malformed}, "--timeout must be positive"},
		{"replay without a summary", []string{"replay"}, "usage: storecheck replay"},
		{"replay not a summary", []string{"replay", notJSON}, "not a storecheck summary"},
		// A knob a scenario of the plan cannot run with is bad usage, not
		// a NOT RUN: under qualify's default rule that passed the gate.
		{"qualify with more clients than the workload takes", []string{"qualify", "--backends", "memory:", "--scenarios", "conformance,concurrent", "--clients", "5000", "--out", filepath.Join(dir, "k1")}, "concurrent cannot run with the flags given: workload: clients must be 1..1000, got 5000"},
		{"qualify's default scenarios with too many executions", []string{"qualify", "--backends", "memory:", "--executions", "200000", "--out", filepath.Join(dir, "k2")}, "executions must be 1..100000"},
		{"run with a duration past the workload's", []string{"run", "--backend", "memory:", "--scenario", "concurrent", "--duration", "2h", "--out", filepath.Join(dir, "k3")}, "concurrent cannot run with the flags given: workload: duration must be 0..1h0m0s, got 2h0m0s"},
		{"the replica-lag sweep with more clients than it takes", []string{"run", "--backend", "lagsim:" + filepath.Join(dir, "p.db"), "--scenario", "replica-lag-conflict", "--clients", "300", "--out", filepath.Join(dir, "k4")}, "replica-lag-conflict cannot run with the flags given: replicalag: clients must be 1..256, got 300"},
		// The option is the summary's, not a flag the command line gave.
		{"replay of an option no run has", []string{"replay", "--out", filepath.Join(dir, "r"), zeroOps}, "run 1 of " + zeroOps + " records ops=0: at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != ExitUsage {
				t.Errorf("exit code: want %d, got %d", ExitUsage, code)
			}
			if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("want one line saying %q, got:\n%s", c.want, stderr)
			}
		})
	}
	for _, k := range []string{"k1", "k2", "k3", "k4"} {
		if _, err := os.Stat(filepath.Join(dir, k)); err == nil {
			t.Errorf("a refused knob left its output folder %s: the runs started", k)
		}
	}
}

func TestCheckIllegalHistoryExitsOneWithVisualization(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run(t, "check", "--out", out, filepath.Join("..", "..", "linearizability", "testdata", "lost_update.jsonl"))
	if code != ExitFail {
		t.Fatalf("exit: want 1, got %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Illegal") || !strings.Contains(stdout, "lost update") {
		t.Errorf("output does not name the verdict and guarantee:\n%s", stdout)
	}
	vis := filepath.Join(out, "lost_update.visualization.html")
	if b, err := os.ReadFile(vis); err != nil || !bytes.Contains(b, []byte("<html")) {
		t.Fatalf("visualization not written at %s: %v", vis, err)
	}
	code, stdout, _ = run(t, "check", filepath.Join("..", "..", "linearizability", "testdata", "indeterminate_ok.jsonl"))
	if code != ExitOK || !strings.Contains(stdout, "PASS (porcupine: Ok)") {
		t.Fatalf("a legal history: want exit 0 and Ok, got %d: %s", code, stdout)
	}
}

// qualify with one backend, then replay its runs from the summary: the same
// seed, the same sequence.
func TestQualifyThenReplay(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run(t, "qualify", "--backends", "memory:", "--seed", "9", "--checks", "5", "--ops", "100", "--out", out)
	if code != ExitOK {
		t.Fatalf("qualify: exit %d\n%s%s", code, stdout, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Runs) < 2 {
		t.Fatalf("qualify ran %d runs, want one per scenario", len(sum.Runs))
	}
	var conf reports.Run
	for _, r := range sum.Runs {
		if r.Scenario == "conformance" {
			conf = r
		}
		if !strings.Contains(r.Reproduce, "--seed 9") {
			t.Errorf("reproduce command of %s lacks the seed: %s", r.Scenario, r.Reproduce)
		}
	}
	again := t.TempDir()
	code, stdout, stderr = run(t, "replay", "--scenario", "conformance", "--out", again, filepath.Join(out, "summary.json"))
	if code != ExitOK {
		t.Fatalf("replay: exit %d\n%s%s", code, stdout, stderr)
	}
	replayed, err := reports.ReadSummary(filepath.Join(again, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(replayed.Runs) != 1 || replayed.Runs[0].SequenceDigest != conf.SequenceDigest || replayed.Seed != 9 {
		t.Fatalf("replay ran another sequence: %+v vs %+v", replayed.Runs, conf)
	}
	if code, _, stderr := run(t, "replay", "--out", again, filepath.Join(out, "summary.json")); code != ExitUsage || !strings.Contains(stderr, "runs match") {
		t.Fatalf("replay of an ambiguous summary: want exit 2 asking for --run, got %d: %s", code, stderr)
	}
}

// An interrupted run still writes a summary, which says INTERRUPTED.
func TestInterruptedRunWritesSummary(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"run", "--backend", "memory:", "--seed", "1", "--out", out}, &stdout, &stderr)
	if code != ExitInterrupted {
		t.Fatalf("exit: want %d, got %d\n%s", ExitInterrupted, code, stderr.String())
	}
	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Runs {
		if r.Verdict != reports.Interrupted {
			t.Errorf("%s: want INTERRUPTED, got %s", r.Scenario, r.Verdict)
		}
	}
}

// check --out naming a file (or a folder under one) is refused before the
// check, in one line: the verdict and the first violations were printed,
// then the error, for a flag that was wrong from the start.
func TestCheckRefusesAFileAsItsOutput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{file, filepath.Join(file, "sub")} {
		code, stdout, stderr := run(t, "check", "--out", out, filepath.Join("..", "..", "linearizability", "testdata", "lost_update.jsonl"))
		if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "output folder") {
			t.Errorf("--out %s: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and one line naming the output folder", out, code, stdout, stderr)
		}
	}
}

// An interrupted check exits 130 with one line saying so, as run does: not
// 1 for a checker that "timed out", nor 0 for a verdict the interrupt cut
// short.
func TestInterruptedCheckExits130(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, history := range []string{"indeterminate_ok.jsonl", "lost_update.jsonl"} {
		var stdout, stderr bytes.Buffer
		code := Main(ctx, []string{"check", "--out", t.TempDir(), filepath.Join("..", "..", "linearizability", "testdata", history)}, &stdout, &stderr)
		if code != ExitInterrupted || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%s: exit %d, stderr %q; want %d and one line saying it was interrupted\n%s", history, code, stderr.String(), ExitInterrupted, stdout.String())
		}
	}
}

// An interrupted mutants run exits 130 with an INTERRUPTED verdict, as run
// and qualify do, and calls no mutant a survivor whose runs never finished.
func TestInterruptedMutantsExits130(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"mutants", "--only", "unsynced-full,memory", "--seed", "2", "--out", out}, &stdout, &stderr)
	if code != ExitInterrupted {
		t.Fatalf("exit: want %d, got %d\n%s%s", ExitInterrupted, code, stdout.String(), stderr.String())
	}
	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Verdict != reports.Interrupted {
		t.Errorf("summary verdict %s, want INTERRUPTED", sum.Verdict)
	}
	if strings.Contains(stdout.String(), "survivors") || !strings.Contains(stdout.String(), "INTERRUPTED: no outcome for unsynced-full, memory") {
		t.Errorf("the table does not say INTERRUPTED, or names a survivor:\n%s", stdout.String())
	}
}

func TestSplitBackendList(t *testing.T) {
	got := splitBackendList([]string{"memory:,sqlite:/tmp/a.db", "rqlite://h1:4001,h2:4001?level=strong,nope:"})
	if strings.Join(got, " ") != "memory: sqlite:/tmp/a.db rqlite://h1:4001,h2:4001?level=strong nope:" {
		t.Fatalf("got %q", got)
	}
}

// The same seed plans the same concurrent run: two runs carry one plan
// digest, and replaying one says it reproduced it.
func TestConcurrentRunsReproduce(t *testing.T) {
	dir := t.TempDir()
	var digests []string
	for i, db := range []string{"a.db", "b.db"} {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		code, stdout, stderr := run(t, "run", "--backend", "sqlite:"+filepath.Join(dir, db), "--scenario", "concurrent", "--seed", "5", "--ops", "400", "--out", out)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, sum.Runs[0].SequenceDigest)
	}
	if digests[0] == "" || digests[0] != digests[1] {
		t.Fatalf("plan digests %v: want one, twice", digests)
	}
	replayed := filepath.Join(dir, "replayed")
	code, _, stderr := run(t, "replay", "--run", "1", "--out", replayed, "--backend", "sqlite:"+filepath.Join(dir, "c.db"), filepath.Join(dir, "out0", "summary.json"))
	if code != ExitOK || !strings.Contains(stderr, "reproduced: same plan ("+digests[0]+"), same verdict (PASS)") {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(replayed, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := sum.Runs[0].Replay; p == nil || !p.SamePlan || !p.SameVerdict {
		t.Errorf("the replay's summary: %+v", p)
	}
}

// TestQuietReplayPrintsOnlyTheTable: --quiet means for replay what it
// means for run and qualify: stdout carries the table, stderr nothing but
// an error, and the verdict is the exit code; --json likewise leaves
// stderr empty. Whether the replay reproduced the original is in its
// summary.json and summary.md; without either flag replay says it on
// stderr too.
func TestQuietReplayPrintsOnlyTheTable(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig")
	code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "1", "--out", orig, "--quiet")
	if code != ExitOK || stderr != "" {
		t.Fatalf("run --quiet: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	for _, mode := range []string{"--quiet", "--json"} {
		out := filepath.Join(dir, "replay"+mode)
		code, stdout, stderr := run(t, "replay", mode, "--out", out, orig)
		if code != ExitOK || stderr != "" || stdout == "" {
			t.Errorf("replay %s: exit %d, stderr %q, stdout %d bytes; want 0, nothing on stderr and the table or the summary on stdout", mode, code, stderr, len(stdout))
		}
		sum, err := reports.ReadSummary(filepath.Join(out, reports.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		if p := sum.Runs[0].Replay; p == nil || !p.SamePlan || !p.SameVerdict {
			t.Errorf("replay %s: its summary says %+v, want it reproduced", mode, p)
		}
		if md, err := os.ReadFile(filepath.Join(out, reports.MarkdownFile)); err != nil || !strings.Contains(string(md), "reproduced: same plan") {
			t.Errorf("replay %s: summary.md does not say it reproduced (%v)", mode, err)
		}
	}
	_, _, stderr = run(t, "replay", "--out", filepath.Join(dir, "replay"), orig)
	if !strings.Contains(stderr, "reproduced: same plan") {
		t.Errorf("replay without --quiet: stderr %q, want the replay's line", stderr)
	}
}

// The headline agrees with the exit code: a gate failed by NOT RUN under
// --fail-on-not-run says so in summary.md, index.html and summary.json; a
// scenario that does not apply is not a NOT RUN that fails the gate.
func TestGateHeadlineAgreesWithExitCode(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := run(t, "qualify", "--backends", "memory:,rqlite://127.0.0.1:1?connect_timeout=1s", "--scenarios", "conformance",
		"--checks", "5", "--fail-on-not-run", "--out", dir, "--quiet")
	if code != ExitFail {
		t.Fatalf("exit %d, want %d", code, ExitFail)
	}
	const want = "GATE FAILED: 1 NOT RUN under --fail-on-not-run"
	if !strings.Contains(stdout, "gate: "+want+" (exit 1)") {
		t.Errorf("the table printed does not say why the exit code is 1:\n%s", stdout)
	}
	for _, f := range []string{"summary.md", "index.html", "summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s does not say %q (%v)", f, want, err)
		}
	}
	// summary.json's own verdict is no PASS where the gate failed: a
	// reader of the file alone sees what CI saw.
	sum, err := reports.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Verdict != reports.NotRun || sum.Gate.ExitCode != ExitFail {
		t.Errorf("summary.json: verdict %s, gate exit %d; want NOT RUN where the gate failed on a NOT RUN", sum.Verdict, sum.Gate.ExitCode)
	}
	dir = t.TempDir()
	code, _, stderr := run(t, "qualify", "--backends", "memory:", "--scenarios", "conformance,crash-recovery",
		"--checks", "5", "--fail-on-not-run", "--out", dir, "--quiet")
	if code != ExitOK {
		t.Fatalf("a scenario that does not apply failed the gate: exit %d %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if !strings.Contains(string(b), `"not_applicable": true`) || !strings.Contains(string(b), "1 not applicable") {
		t.Errorf("the not-applicable pair is not marked apart:\n%s", b)
	}
}

// run has no --fail-on-not-run: a NOT RUN fails it (exit 2, the run asked
// for could not happen), and its headline says that, not a flag it was not
// given.
func TestRunNotRunHeadlineNamesNoFlag(t *testing.T) {
	dir := t.TempDir()
	code, _, _ := run(t, "run", "--backend", "memory:", "--backend", "rqlite://127.0.0.1:1?connect_timeout=1s", "--scenario", "conformance",
		"--checks", "5", "--out", dir, "--quiet")
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d", code, ExitUsage)
	}
	sum, err := reports.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if h := sum.Gate.Headline; strings.Contains(h, "--fail-on-not-run") || !strings.Contains(h, "1 NOT RUN") {
		t.Errorf("headline %q: want the NOT RUN named without a flag run does not have", h)
	}
}

// A gate that checked nothing has not passed: every run NOT RUN fails it
// with or without --fail-on-not-run, and says so; run skips the default
// backends a scenario does not apply to, but not a backend it was given.
func TestNothingCheckedIsNoPass(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"qualify, nothing applies", []string{"qualify", "--backends", "runs+memory:", "--scenarios", "conformance"}, ExitFail, "GATE FAILED: nothing was checked"},
		{"qualify, nothing applies, --fail-on-not-run", []string{"qualify", "--backends", "runs+memory:", "--scenarios", "conformance", "--fail-on-not-run"}, ExitFail, "GATE FAILED: nothing was checked"},
		{"qualify, nothing started", []string{"qualify", "--backends", "rqlite://127.0.0.1:1?connect_timeout=1s", "--scenarios", "conformance"}, ExitFail, "GATE FAILED: nothing was checked (every run NOT RUN) (1 NOT RUN)"},
		{"qualify, nothing started, --fail-on-not-run", []string{"qualify", "--backends", "rqlite://127.0.0.1:1?connect_timeout=1s", "--scenarios", "conformance", "--fail-on-not-run"}, ExitFail, `"headline": "GATE FAILED: nothing was checked (every run NOT RUN), 1 NOT RUN under --fail-on-not-run"`},
		{"run, nothing started", []string{"run", "--backend", "rqlite://127.0.0.1:1?connect_timeout=1s", "--scenario", "conformance"}, ExitUsage, `"headline": "GATE FAILED: nothing was checked (every run NOT RUN), 1 NOT RUN (a run asked for could not happen)"`},
		{"run, given a backend it does not apply to", []string{"run", "--backend", "runs+memory:", "--scenario", "conformance"}, ExitUsage, "GATE FAILED: nothing was checked"},
		{"run, default backends, one does not apply", []string{"run", "--scenario", "conformance", "--checks", "2"}, ExitOK, `"headline": "PASS (1 not applicable)"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := run(t, append(c.args, "--seed", "1", "--out", dir, "--quiet")...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (%s)", code, c.code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil || !strings.Contains(string(b), c.want) {
				t.Errorf("summary.json does not say %q (%v):\n%s", c.want, err, b)
			}
		})
	}
}

// Without --out every invocation keeps its results in a new folder under
// storecheck-out/ of the current folder, latest points at the newest, and
// replay never writes over its input: without --out it too writes under
// storecheck-out/ of the current folder, wherever its input is (README).
func TestResultsAreKept(t *testing.T) {
	t.Chdir(t.TempDir())
	for range 2 {
		if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--quiet"); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	entries, err := os.ReadDir(OutRoot)
	if err != nil {
		t.Fatal(err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	if len(folders) != 2 {
		t.Fatalf("folders %v, want one per invocation", folders)
	}
	latest, err := os.Readlink(filepath.Join(OutRoot, "latest"))
	if err != nil || latest != folders[1] {
		t.Errorf("latest -> %q (%v), want the newest, %s", latest, err, folders[1])
	}
	input := filepath.Join(OutRoot, "latest", "summary.json")
	if code, _, _ := run(t, "replay", "--run", "1", "--out", filepath.Join(OutRoot, "latest"), input); code != ExitUsage {
		t.Errorf("replay over its own input: exit %d, want %d", code, ExitUsage)
	}
	if code, _, stderr := run(t, "replay", "--run", "1", "--quiet", input); code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(OutRoot, folders[1], "summary.json")); err != nil {
		t.Errorf("the replayed summary is gone: %v", err)
	}
	if after, _ := os.ReadDir(OutRoot); len(after) != 4 {
		t.Errorf("%d entries after the replay, want 3 folders and latest", len(after))
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--quiet", "--out", elsewhere); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "replay", "--quiet", elsewhere); code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	beside, _ := os.ReadDir(filepath.Dir(elsewhere))
	if after, _ := os.ReadDir(OutRoot); len(after) != 5 || len(beside) != 1 {
		t.Errorf("replay of a summary outside storecheck-out/: %d entries under %s (want 4 folders and latest), %d beside the input (want it alone)", len(after), OutRoot, len(beside))
	}
}

// TestRunAndQualifyTakeTheSameFlags: one or many backends, one or many
// scenarios, the same knobs; qualify alone has --fail-on-not-run (for run
// a NOT RUN is already an error).
func TestRunAndQualifyTakeTheSameFlags(t *testing.T) {
	flags := func(cmd string) map[string]bool {
		_, stdout, _ := run(t, cmd, "-h")
		out := map[string]bool{}
		for _, l := range strings.Split(stdout, "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "-") {
				out[strings.TrimPrefix(f[0], "-")] = true
			}
		}
		return out
	}
	r, q := flags("run"), flags("qualify")
	delete(q, "fail-on-not-run")
	if len(r) < 10 || !reflect.DeepEqual(r, q) {
		t.Errorf("run takes %v\nqualify takes %v", r, q)
	}
}

// mutants --quiet prints the table (with the seeds it ran) and where the
// reports are, and nothing on stderr; without it, the seed line and one
// progress line per run go to stderr.
func TestMutantsQuiet(t *testing.T) {
	for _, quiet := range []bool{true, false} {
		args := []string{"mutants", "--only", "memory", "--seed", "1", "--out", t.TempDir()}
		if quiet {
			args = append(args, "--quiet")
		}
		code, stdout, stderr := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(stdout, "from --seed 1") || !strings.Contains(stdout, "summary: ") {
			t.Errorf("%v: the table or the report paths are missing:\n%s", args, stdout)
		}
		if quiet && stderr != "" {
			t.Errorf("--quiet printed on stderr:\n%s", stderr)
		}
		if !quiet && (!strings.Contains(stderr, "repeat with --seed 1") || !strings.Contains(stderr, "memory (correct) conformance")) {
			t.Errorf("without --quiet, no seed or progress line on stderr:\n%s", stderr)
		}
	}
}

// TestGCProfile: the commands that run scenarios get the garbage collector
// tuned for them, check the one tuned for checking a saved history (the
// million-operation check's memory is measured with it), and diff, merge
// and the rest keep Go's defaults (cmd/storecheck).
func TestGCProfile(t *testing.T) {
	for args, want := range map[string]procgc.Profile{
		"qualify": procgc.Scenarios, "run": procgc.Scenarios, "soak": procgc.Scenarios, "mutants": procgc.Scenarios,
		"replay": procgc.Scenarios, worker.Arg: procgc.Scenarios,
		"check": procgc.Check,
		"diff":  procgc.Defaults, "merge": procgc.Defaults, "help": procgc.Defaults, "": procgc.Defaults, "--seed": procgc.Defaults,
	} {
		var a []string
		if args != "" {
			a = []string{args, "--seed", "1"}
		}
		if got := GCProfile(a); got != want {
			t.Errorf("GCProfile(%q) = %v; want %v", a, got, want)
		}
	}
}

// The reproduce line of a run repeats it: run that line and the run has
// the same plan and operation count, for a property scenario whose knobs
// are not its family's defaults (runs-conformance reads --checks and
// --steps) and a workload run given --ops.
func TestReproduceLineRepeatsTheRun(t *testing.T) {
	for _, args := range [][]string{
		{"--backend", "runs+memory:", "--scenario", "runs-conformance", "--checks", "3", "--steps", "5"},
		{"--backend", "memory:", "--scenario", "conformance", "--checks", "4", "--clients", "3"},
	} {
		dir := t.TempDir()
		if code, _, stderr := run(t, append([]string{"run", "--seed", "9", "--out", dir, "--quiet"}, args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		first, err := reports.ReadSummary(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Fields(first.Runs[0].Reproduce)
		if len(line) < 2 || line[0] != "storecheck" {
			t.Fatalf("reproduce line %q", first.Runs[0].Reproduce)
		}
		again := t.TempDir()
		if code, _, stderr := run(t, append(line[1:], "--out", again, "--quiet")...); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", first.Runs[0].Reproduce, code, stderr)
		}
		second, err := reports.ReadSummary(filepath.Join(again, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := first.Runs[0], second.Runs[0]; a.Ops != b.Ops || a.SequenceDigest != b.SequenceDigest {
			t.Errorf("%s: %d ops, sequence %q; its reproduce line gave %d ops, sequence %q", first.Runs[0].Reproduce, a.Ops, a.SequenceDigest, b.Ops, b.SequenceDigest)
		}
	}
}

// TestUsageShowsPositionalArguments: the -h of a command that takes
// positional arguments (check, replay, merge, diff) shows the same synopsis
// as the usage error of a command line that lacks them, positional
// arguments included, then its flags; exit 0.
func TestUsageShowsPositionalArguments(t *testing.T) {
	for cmd, arg := range map[string]string{"check": "HISTORY.jsonl", "replay": "SUMMARY", "merge": "SHARD…", "diff": "BASE NEW"} {
		code, _, stderr := run(t, cmd)
		if code != ExitUsage || !strings.Contains(stderr, arg) {
			t.Fatalf("%s: exit %d, stderr %q; want 2 and a synopsis with %s", cmd, code, stderr, arg)
		}
		synopsis := strings.TrimPrefix(strings.TrimSpace(stderr), "storecheck "+cmd+": ")
		code, stdout, _ := run(t, cmd, "-h")
		first, flags, _ := strings.Cut(stdout, "\n")
		if code != ExitOK || first != synopsis || !strings.Contains(flags, "\n  -") {
			t.Errorf("%s -h: exit %d, first line %q; want 0, %q, then the flags", cmd, code, first, synopsis)
		}
	}
}

// TestReplayTakesAFolder: replay takes the folder that holds a
// summary.json, as diff and merge do, and replays its run from it.
func TestReplayTakesAFolder(t *testing.T) {
	dir := t.TempDir()
	orig, again := filepath.Join(dir, "orig"), filepath.Join(dir, "again")
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "4", "--out", orig, "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, _, stderr := run(t, "replay", "--quiet", "--out", again, orig)
	if code != ExitOK {
		t.Fatalf("replay of a folder: exit %d: %s", code, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(again, "summary.json"))
	if err != nil || len(sum.Runs) != 1 || sum.Runs[0].Replay == nil || !sum.Runs[0].Replay.SamePlan || sum.Seed != 4 {
		t.Fatalf("the replay's summary: %v %+v", err, sum)
	}
	if code, _, stderr := run(t, "replay", "--out", orig, orig); code != ExitUsage || !strings.Contains(stderr, "never writes over its input") {
		t.Errorf("replay over the folder it reads: exit %d: %s", code, stderr)
	}
}

// TestReplayRejectsABadRunNumber: --run 0 or a negative --run is not a
// run's position: one line saying so and exit 2, rather than being read as
// no --run ("N runs match; choose one with --run N").
func TestReplayRejectsABadRunNumber(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, "qualify", "--backends", "memory:", "--scenarios", "conformance,concurrent", "--checks", "3", "--ops", "100", "--seed", "2", "--out", dir, "--quiet"); code != ExitOK {
		t.Fatalf("qualify: exit %d: %s", code, stderr)
	}
	for _, n := range []string{"0", "-1"} {
		code, _, stderr := run(t, "replay", "--run", n, "--out", t.TempDir(), dir)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "--run must be at least 1") {
			t.Errorf("--run %s: exit %d, stderr %q; want 2 and one line saying --run must be at least 1", n, code, stderr)
		}
	}
}

// TestReplayRejectsSeedZero: a summary whose run has seed 0 (edited by
// hand; no run has it) is refused in one line before anything runs, as
// --seed 0 is, not replayed as a NOT RUN that prints "repeat with --seed 0".
func TestReplayRejectsSeedZero(t *testing.T) {
	dir := t.TempDir()
	sum := filepath.Join(dir, "summary.json")
	body := `{"seed":1,"runs":[{"backend":"memory:","scenario":"conformance","verdict":"PASS","seed":0,"reproduce":"x","duration_ms":1,"ops":1}]}`
	if err := os.WriteFile(sum, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "replayed")
	code, stdout, stderr := run(t, "replay", "--out", out, sum)
	if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "seed 0") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming seed 0", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused replay made its output folder %s", out)
	}
}

// TestReplayRunAndScenarioCombine: --scenario chooses among the runs with
// --run too: a --run of another scenario is refused in one line (exit 2),
// never replayed with the --scenario ignored; a --run of that scenario is
// replayed.
func TestReplayRunAndScenarioCombine(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, "qualify", "--backends", "memory:", "--scenarios", "conformance,concurrent", "--checks", "3", "--ops", "100", "--seed", "2", "--out", dir, "--quiet"); code != ExitOK {
		t.Fatalf("qualify: exit %d: %s", code, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil || len(sum.Runs) != 2 {
		t.Fatalf("the summary: %v %+v", err, sum)
	}
	for i, r := range sum.Runs {
		n := fmt.Sprint(i + 1)
		other := sum.Runs[1-i].Scenario
		code, stdout, stderr := run(t, "replay", "--run", n, "--scenario", other, "--out", t.TempDir(), dir)
		if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "--run "+n+" is a "+r.Scenario+" run, not --scenario "+other) {
			t.Errorf("--run %s --scenario %s: exit %d, stderr %q; want 2 and one line saying run %s is a %s run", n, other, code, stderr, n, r.Scenario)
		}
	}
	again := t.TempDir()
	if code, _, stderr := run(t, "replay", "--run", "1", "--scenario", sum.Runs[0].Scenario, "--out", again, "--quiet", dir); code != ExitOK {
		t.Fatalf("--run 1 --scenario %s: exit %d: %s", sum.Runs[0].Scenario, code, stderr)
	}
	if got, err := reports.ReadSummary(filepath.Join(again, "summary.json")); err != nil || len(got.Runs) != 1 || got.Runs[0].Scenario != sum.Runs[0].Scenario {
		t.Errorf("the replay: %v %+v", err, got)
	}
}

// TestCheckLeaseHistory: check takes the lease histories lease-stall
// writes (history-goroutines.jsonl, history-processes.jsonl), which it
// refused for their "worker" field: each PASSes, as the run did; a copy in
// which a worker's commit past its lease succeeded FAILs (exit 1), naming
// the broken guarantee, with porcupine's visualization of the run.
func TestCheckLeaseHistory(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := run(t, "run", "--backend", "runs+sqlite:{dir}/runs.db", "--scenario", "lease-stall", "--seed", "1", "--out", out, "--quiet"); code != ExitOK {
		t.Fatalf("lease-stall: exit %d\n%s%s", code, stdout, stderr)
	}
	histories, _ := filepath.Glob(filepath.Join(out, "runs", "*", "history-*.jsonl"))
	if len(histories) != 2 {
		t.Fatalf("lease histories %v, want one per mode", histories)
	}
	for _, h := range histories {
		code, stdout, stderr := run(t, "check", h)
		if code != ExitOK || !strings.Contains(stdout, "PASS (leases: Ok)") || !strings.Contains(stdout, "operations of a lease history") {
			t.Errorf("check %s: exit %d\n%s%s", h, code, stdout, stderr)
		}
	}
	// From standard input too: it is read again as a lease history once
	// it is found not to be an execution store's.
	lease, err := os.ReadFile(histories[0])
	if err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runIn(t, lease, "check", "-"); code != ExitOK || !strings.HasPrefix(stdout, "standard input: PASS (leases: Ok)") {
		t.Errorf("check - of %s: exit %d\n%s%s", histories[0], code, stdout, stderr)
	}
	f, err := os.Open(histories[0])
	if err != nil {
		t.Fatal(err)
	}
	ops, err := leases.ReadJSONL(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tampered := false
	for i, op := range ops {
		if op.PastLease && op.Kind == leases.Commit && op.Outcome == leases.Stale {
			ops[i].Outcome, ops[i].Err, ops[i].Version = leases.OK, "", op.Expected+1
			tampered = true
			break
		}
	}
	if !tampered {
		t.Fatalf("%s holds no commit past its lease to tamper with", histories[0])
	}
	var buf bytes.Buffer
	if err := leases.WriteJSONL(&buf, ops); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "tampered.jsonl")
	if err := os.WriteFile(bad, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "check", bad)
	if code != ExitFail || !strings.Contains(stdout, "FAIL (leases: Illegal)") || !strings.Contains(stdout, leases.GuaranteePastLease) {
		t.Errorf("check of the tampered copy: exit %d, want 1 naming %q\n%s%s", code, leases.GuaranteePastLease, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "tampered.visualization.html")); err != nil || !bytes.Contains(b, []byte("<html")) {
		t.Errorf("no visualization of the tampered copy: %v", err)
	}
	// Cut at a line ending, the history holds only well-formed lines, and
	// the operations it kept pass: check refuses it (exit 2), since its
	// first line says how many were written.
	whole, err := os.ReadFile(histories[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, bytes.Join(lines[:len(lines)/2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "check", cut)
	if code != ExitUsage || !strings.Contains(stderr, "not a whole lease history") || !strings.Contains(stderr, "cut or edited") {
		t.Errorf("check of a lease history cut at a line: exit %d, want 2 saying it was cut\n%s%s", code, stdout, stderr)
	}
}

// TestReplayRunOfAShardIsItsPlanPosition: --run N on a shard's summary is
// run N as the report numbers it (its folder runs/NN-…, the plan's
// position), not the Nth run the shard holds; a run of another shard is
// refused in one line, and the replay names the original by the same
// number.
func TestReplayRunOfAShardIsItsPlanPosition(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "s2")
	if code, _, stderr := run(t, "qualify", "--backends", "memory:,sqlite::memory:", "--scenarios", "conformance,concurrent", "--checks", "3", "--ops", "100",
		"--seed", "4", "--shard", "2/2", "--out", shard, "--quiet"); code != ExitOK {
		t.Fatalf("shard 2/2: exit %d: %s", code, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(shard, "summary.json"))
	if err != nil || len(sum.Runs) != 2 || sum.Runs[0].Index != 2 || sum.Runs[1].Index != 4 {
		t.Fatalf("shard 2/2 of 4 runs: %v %+v", err, sum)
	}
	for _, c := range []struct {
		args []string
		want reports.Run
		n    int
	}{
		{[]string{"--run", "4"}, sum.Runs[1], 4},
		{[]string{"--run", "2"}, sum.Runs[0], 2},
		{[]string{"--backend", "sqlite::memory:"}, sum.Runs[1], 4},
	} {
		out := filepath.Join(dir, fmt.Sprintf("replay-%d-%s", c.n, c.args[0][2:]))
		code, _, stderr := run(t, append(append([]string{"replay"}, c.args...), "--out", out, "--quiet", shard)...)
		if code != ExitOK {
			t.Fatalf("replay %v: exit %d: %s", c.args, code, stderr)
		}
		got, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil || len(got.Runs) != 1 {
			t.Fatalf("replay %v: %v %+v", c.args, err, got)
		}
		r := got.Runs[0]
		if r.Backend != c.want.Backend || r.Scenario != c.want.Scenario {
			t.Errorf("replay %v replayed %s on %s; want run %d, %s on %s", c.args, r.Scenario, r.Backend, c.n, c.want.Scenario, c.want.Backend)
		}
		if want := fmt.Sprintf("%s#%d", shard, c.n); r.Replay == nil || r.Replay.Of != want {
			t.Errorf("replay %v: of %+v; want %s", c.args, r.Replay, want)
		}
	}
	code, stdout, stderr := run(t, "replay", "--run", "3", "--out", filepath.Join(dir, "r3"), shard)
	if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "shard 1/2") {
		t.Errorf("--run 3 of shard 2/2: exit %d, stderr %q; want 2 and one line saying run 3 is in shard 1/2", code, stderr)
	}
}

// TestOutOverAnEarlierReportDropsItsClaims: --out naming an earlier
// report's folder removes that report's summary.json and rendered files
// before the runs start, so that a storecheck killed mid-run (SIGKILL, a
// CI job's timeout) leaves no PASS of the earlier runs beside the new
// runs' folders; a summary.json that is not storecheck's is left alone.
func TestOutOverAnEarlierReportDropsItsClaims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "1", "--out", dir, "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	files := []string{reports.SummaryFile, reports.MarkdownFile, reports.HTMLFile, reports.JUnitFile}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("the first run wrote no %s: %v", f, err)
		}
	}
	// What a run into dir does before its runs start.
	if err := prepareOut(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s of the earlier report is still there while the new runs go", f)
		}
	}
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, reports.SummaryFile), []byte(`{"not":"storecheck"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareOut(mine); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mine, reports.SummaryFile)); err != nil {
		t.Errorf("a summary.json that is not storecheck's was removed: %v", err)
	}
}

// TestOutOverAnOlderSchemaReportDropsItsClaims: an earlier report whose
// summary.json is of another schema version than this storecheck reads
// (an older storecheck's, "schema": 1, or a newer one's) is still
// storecheck's: --out over it removes it and its rendered files before
// the runs start, as for the current version, so that a storecheck killed
// mid-run leaves no older verdict beside the new runs' folders. JSON that
// only has a "schema" field is not a summary and is left alone.
func TestOutOverAnOlderSchemaReportDropsItsClaims(t *testing.T) {
	first := filepath.Join(t.TempDir(), "first")
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "1", "--out", first, "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	current, err := os.ReadFile(filepath.Join(first, reports.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf(`"schema": %d`, reports.SchemaVersion)
	if !bytes.Contains(current, []byte(schema)) {
		t.Fatalf("the summary does not say %s", schema)
	}
	files := []string{reports.SummaryFile, reports.MarkdownFile, reports.HTMLFile, reports.JUnitFile}
	for _, version := range []int{1, reports.SchemaVersion + 1} {
		dir := filepath.Join(t.TempDir(), "report")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files[1:] {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("the earlier report's"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		older := bytes.Replace(current, []byte(schema), []byte(fmt.Sprintf(`"schema": %d`, version)), 1)
		if err := os.WriteFile(filepath.Join(dir, reports.SummaryFile), older, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := prepareOut(dir); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("schema %d: %s of the earlier report is still there while the new runs go", version, f)
			}
		}
	}
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, reports.SummaryFile), []byte(`{"schema": 1, "name": "not storecheck's"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareOut(mine); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(mine, reports.SummaryFile)); err != nil {
		t.Errorf("a summary.json that is not storecheck's was removed: %v", err)
	}
}

// TestLatestThatIsNoLinkIsRefusedFirst: a storecheck-out/latest that is
// not a link (a folder someone made, a file) is refused in one line before
// anything runs, not found after the runs, when their table was never
// printed and the command exited 2.
func TestLatestThatIsNoLinkIsRefusedFirst(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(filepath.Join(OutRoot, "latest"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "2", "--quiet")
	if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "latest") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing run and one line naming latest", code, stdout, stderr)
	}
	entries, _ := os.ReadDir(OutRoot)
	if len(entries) != 1 {
		t.Errorf("%d entries under %s, want latest alone: the run made a report folder", len(entries), OutRoot)
	}
}

// TestDoubleDashEndsTheFlags: after "--" every argument is a positional
// one, as the flag package and every other command line has it: a history
// named "-h.jsonl" is checked, not refused as an unexpected argument, and
// merge takes its shards after "--" too.
func TestDoubleDashEndsTheFlags(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "concurrent", "--ops", "50", "--seed", "1", "--out", "r", "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join("r", "runs", "01-memory-concurrent", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("-h.jsonl", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "check", "--timeout", "1m", "--", "-h.jsonl"); code != ExitOK || !strings.Contains(stdout, "PASS") {
		t.Errorf("check -- -h.jsonl: exit %d, stdout %q, stderr %q; want the history checked", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "check", "--", "-h.jsonl", "extra"); code != ExitUsage || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("check -- -h.jsonl extra: exit %d, stderr %q; want 2 and the extra argument named", code, stderr)
	}
	qualifyTwoShards(t)
	if code, _, stderr := run(t, "merge", "--out", "m", "--quiet", "--", "s1", "s2"); code != ExitOK {
		t.Errorf("merge -- s1 s2: exit %d: %s", code, stderr)
	}
}
