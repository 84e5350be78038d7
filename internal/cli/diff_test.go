package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/reports"
)

// TestDiff: two qualifications of the same backends, the second with a
// deliberately broken store in place of the correct one: the cell that
// went PASS→FAIL is named and the exit code is 1; a summary against
// itself exits 0; bad input exits 2.
func TestDiff(t *testing.T) {
	dir := t.TempDir()
	base, next := filepath.Join(dir, "base"), filepath.Join(dir, "new")
	db := filepath.Join(dir, "x.db")
	if code, out, errs := run(t, "run", "--backend", "sqlite:"+db, "--scenario", "conformance", "--seed", "3", "--out", base); code != ExitOK {
		t.Fatalf("base: exit %d\n%s%s", code, out, errs)
	}
	// The same cell, a different store: blind-write keeps no compare-and-swap.
	if code, out, errs := run(t, "run", "--backend", "mutant:blind-write", "--scenario", "conformance", "--seed", "3", "--out", next); code != ExitFail {
		t.Fatalf("new: exit %d\n%s%s", code, out, errs)
	}
	// Make the new summary's cell the base's: same backend URL.
	raw, err := os.ReadFile(filepath.Join(next, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(next, "summary.json"), []byte(strings.ReplaceAll(string(raw), "mutant:blind-write", "sqlite:"+db)), 0o644); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "diff.md")
	code, out, errs := run(t, "diff", "--md", md, base, next)
	if code != ExitFail {
		t.Fatalf("diff: exit %d, want 1\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "| ❌ | `sqlite:"+db+"` | conformance | verdict | PASS | FAIL | model conformance |") || !strings.Contains(out, "1 regression") {
		t.Errorf("the regression is not named:\n%s", out)
	}
	if b, err := os.ReadFile(md); err != nil || string(b) != out {
		t.Errorf("--md file: %v\n%s", err, b)
	}
	if code, out, _ := run(t, "diff", base, filepath.Join(base, "summary.json")); code != ExitOK || !strings.Contains(out, "no regression") {
		t.Errorf("a summary against itself: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"diff", base}, {"diff", base, filepath.Join(dir, "nope")}, {"diff", "--slowdown", "x", base, next}} {
		if code, _, errs := run(t, args...); code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
}

// TestDiffOfAnotherSeedGatesOnVerdictsOnly: a CI gate diffing main's
// report with a pull request's made with another seed (or other options)
// exits 0 however far the figures moved (they are shown as not
// comparable), and 1 when a verdict got worse.
func TestDiffOfAnotherSeedGatesOnVerdictsOnly(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if code, out, errs := run(t, "run", "--backend", "memory:", "--scenario", "concurrent", "--ops", "300", "--seed", "1", "--out", base, "--quiet"); code != ExitOK {
		t.Fatalf("base: exit %d\n%s%s", code, out, errs)
	}
	sum, err := reports.ReadSummary(filepath.Join(base, reports.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	// The same cell on seed 2, ten times slower, twice the conflicts.
	r := &sum.Runs[0]
	r.Seed, r.Throughput = 2, r.Throughput/10
	all := r.Latency[reports.AllKinds]
	all.P50, all.P99 = all.P50*10, all.P99*10
	r.Latency[reports.AllKinds] = all
	r.Metrics["conflict_rate"] += 0.5
	next := filepath.Join(dir, "next.json")
	if err := reports.WriteJSON(next, sum); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "diff", base, next)
	if code != ExitOK || !strings.Contains(out, "not comparable: another seed") || strings.Contains(out, "❌") {
		t.Errorf("diff of another seed's slower run: exit %d, want 0 and the figures shown as not comparable\n%s%s", code, out, errs)
	}
	r.Verdict, r.Reason, r.Guarantee = reports.Fail, "a lost update", "lost update"
	if err := reports.WriteJSON(next, sum); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, "diff", base, next); code != ExitFail || !strings.Contains(out, "| ❌ | `memory:` | concurrent | verdict | PASS | FAIL |") {
		t.Errorf("diff of another seed's FAIL: exit %d, want 1 and the verdict a regression\n%s%s", code, out, errs)
	}
}

// TestNotASummary: JSON that is not a storecheck summary — no seed or runs,
// another program's fields, another schema version, a run without its
// required fields — is refused by every command that reads a summary, with
// one line and exit 2, as truncated JSON is; it is never read as a summary
// of no runs ("no regression", "the summary holds 0 runs").
func TestNotASummary(t *testing.T) {
	for _, body := range []string{
		`{}`,
		`{"a":1}`,
		`{"schema":99,"runs":[]}`,
		`{"schema":99,"seed":1,"runs":[]}`,
		`{"seed":1}`,
		`{"seed":1,"runs":[{}]}`,
		`{"seed":1,"runs":[{"backend":"memory:","scenario":"conformance","verdict":"MAYBE","seed":1,"reproduce":"x","duration_ms":1,"ops":1}]}`,
		`[]`,
		`{"seed":1,"runs":[`,
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "summary.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"diff", dir, dir}, {"merge", "--out", filepath.Join(dir, "m"), dir}, {"replay", "--run", "1", path}} {
			code, stdout, stderr := run(t, args...)
			if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "not a storecheck summary") || stdout != "" {
				t.Errorf("%s: %v: exit %d, stdout %q, stderr %q; want 2 and one line saying it is not a storecheck summary", body, args[0], code, stdout, stderr)
			}
		}
	}
}

// TestDiffRefusesNonFiniteThresholds: a threshold of NaN compares false
// with every change, so --slowdown NaN passed a 145% rise of the conflict
// rate as "no regression"; NaN and ±Inf are bad input (negative is the
// documented way to ignore a kind of figure).
func TestDiffRefusesNonFiniteThresholds(t *testing.T) {
	dir := t.TempDir()
	sum := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(sum, []byte(`{"seed":1,"runs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--slowdown", "NaN"}, {"--rate-rise", "nan"}, {"--slowdown", "+Inf"}, {"--rate-rise", "-Inf"},
	} {
		code, stdout, stderr := run(t, append(append([]string{"diff"}, args...), sum, sum)...)
		if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, args[0]) {
			t.Errorf("diff %v: exit %d, stdout %q, stderr %q; want 2 and one line naming %s", args, code, stdout, stderr, args[0])
		}
	}
	if code, _, stderr := run(t, "diff", "--slowdown", "-1", "--rate-rise", "0.2", sum, sum); code != ExitOK {
		t.Errorf("finite thresholds: exit %d: %s", code, stderr)
	}
}

// TestDiffMarkdownNeverOverwritesASummary: --md naming the summary.json
// diff reads (given as the file, or as its folder) is refused in one line,
// exit 2, and the summary is left as it was: it was replaced by the
// Markdown, and every later read of it failed.
func TestDiffMarkdownNeverOverwritesASummary(t *testing.T) {
	dir := t.TempDir()
	body := []byte(`{"seed":1,"runs":[]}`)
	for _, d := range []string{"base", "new"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "summary.json"), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, next := filepath.Join(dir, "base"), filepath.Join(dir, "new")
	for _, args := range [][]string{
		{"--md", filepath.Join(base, "summary.json"), base, next},
		{"--md", filepath.Join(next, "summary.json"), base, filepath.Join(next, "summary.json")},
	} {
		code, stdout, stderr := run(t, append([]string{"diff"}, args...)...)
		if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "--md") {
			t.Errorf("diff %v: exit %d, stdout %q, stderr %q; want 2 and one line about --md", args, code, stdout, stderr)
		}
	}
	for _, d := range []string{base, next} {
		if b, err := os.ReadFile(filepath.Join(d, "summary.json")); err != nil || string(b) != string(body) {
			t.Errorf("%s/summary.json: %q, %v; want it untouched", d, b, err)
		}
	}
}

// TestDiffMarkdownFileThatCannotBeWritten: --md in a folder that does not
// exist, or naming a folder, is refused in one line before the diff is
// printed: the Markdown saying "no regression" went to stdout, then the
// command exited 2.
func TestDiffMarkdownFileThatCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	sum := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(sum, []byte(`{"seed":1,"runs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// "-" is refused rather than made a file of that name.
	t.Chdir(dir)
	for _, md := range []string{filepath.Join(dir, "missing", "diff.md"), dir, filepath.Join(sum, "diff.md"), "-"} {
		code, stdout, stderr := run(t, "diff", "--md", md, sum, sum)
		if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "--md") {
			t.Errorf("--md %s: exit %d, stdout %q, stderr %q; want 2, no diff printed and one line about --md", md, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error(`--md - wrote a file named "-"`)
	}
}
