package reports

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/evidence"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureDate is the summary's modification time in a rendered fixture: the
// report's date.
var fixtureDate = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// renderFixture copies testdata/fixture to a temporary folder, renders it,
// and returns the folder.
func renderFixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "fixture"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, SummaryFile), fixtureDate, fixtureDate); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return dir
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readFile(t, path); got != want {
		t.Errorf("%s differs from %s (run go test ./reports -run %s -update to accept):\n%s", name, path, t.Name(), got)
	}
}

func TestRenderWritesEveryFile(t *testing.T) {
	dir := renderFixture(t)
	for _, name := range []string{MarkdownFile, HTMLFile, JUnitFile} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", name, st.Mode().Perm())
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	dir := renderFixture(t)
	first := map[string]string{}
	for _, name := range []string{MarkdownFile, HTMLFile, JUnitFile} {
		first[name] = readFile(t, filepath.Join(dir, name))
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range first {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s changed between two renders of the same folder", name)
		}
	}
}

func TestRenderNeverShowsSecrets(t *testing.T) {
	dir := renderFixture(t)
	for _, name := range []string{MarkdownFile, HTMLFile, JUnitFile} {
		text := readFile(t, filepath.Join(dir, name))
		for _, secret := range []string{"SECRET123", "hunter2", "admin:"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %q", name, secret)
			}
		}
		if !strings.Contains(text, "REDACTED") {
			t.Errorf("%s shows no redacted URL; is the backend shown at all?", name)
		}
	}
}

func TestRenderMarkdown(t *testing.T) {
	md := readFile(t, filepath.Join(renderFixture(t), MarkdownFile))
	for _, want := range []string{
		"## ❌ storecheck: FAIL",
		"**2 PASS · 2 FAIL · 1 NOT RUN · 1 INTERRUPTED**",
		"seed `42`",
		"| Backend | Scenario | Verdict | Ops | Throughput (ops/s) | p99 commit (ms) | Conflict rate |",
		"- **Broken guarantee:** no lost update",
		"commit c3-118 acknowledged at version 7",
		"commit(e1, expected=0, data=a)",
		"storecheck run --backend 'rqlite://REDACTED@db1:4001/?auth_token=REDACTED' --scenario concurrent --seed 42 --clients 6\n```",
		"connection refused",
		"not started: the run was interrupted",
		"&lt;b&gt;tags&lt;/b&gt; &amp; \\`backticks\\`",
		"| `memory:` | concurrent | ✅ PASS | 240 | 121 | 0.420 | 22.2% |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if strings.Contains(md, "<b>") {
		t.Error("summary.md passes HTML through")
	}
	golden(t, MarkdownFile, md)
}

// junitDoc is what a CI system reads from junit.xml.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name  string         `xml:"name,attr"`
		Tests int            `xml:"tests,attr"`
		Cases []junitDocCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type junitDocCase struct {
	ClassName string  `xml:"classname,attr"`
	Name      string  `xml:"name,attr"`
	Time      float64 `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

func TestRenderJUnit(t *testing.T) {
	text := readFile(t, filepath.Join(renderFixture(t), JUnitFile))
	var doc junitDoc
	dec := xml.NewDecoder(strings.NewReader(text))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	if doc.Tests != 6 || doc.Failures != 2 || doc.Errors != 1 || doc.Skipped != 1 {
		t.Errorf("tests=%d failures=%d errors=%d skipped=%d, want 6 2 1 1", doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	if len(doc.Suites) != 3 {
		t.Fatalf("%d suites, want one per backend (3)", len(doc.Suites))
	}
	var cases, failures, errs, skipped int
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			if c.ClassName != s.Name || (c.Name != "concurrent" && c.Name != "conformance") {
				t.Errorf("test case %s.%s in suite %s", c.ClassName, c.Name, s.Name)
			}
			if c.Failure != nil {
				failures++
				if c.Failure.Message == "" || !strings.Contains(c.Failure.Body, "reproduce: storecheck run") || !strings.Contains(c.Failure.Body, "seed: 42") {
					t.Errorf("failure of %s lacks its reason, seed or reproduce command: %+v", c.Name, c.Failure)
				}
			}
			if c.Error != nil {
				errs++
				if !regexp.MustCompile(`^INTERRUPTED: .+`).MatchString(c.Error.Message) {
					t.Errorf("error message %q", c.Error.Message)
				}
			}
			if c.Skipped != nil {
				skipped++
				if !regexp.MustCompile(`^NOT RUN: .+`).MatchString(c.Skipped.Message) {
					t.Errorf("skipped message %q", c.Skipped.Message)
				}
			}
		}
	}
	if cases != 6 || failures != 2 || errs != 1 || skipped != 1 {
		t.Errorf("%d cases, %d failures, %d errors, %d skipped; want 6 2 1 1", cases, failures, errs, skipped)
	}
	if !strings.Contains(text, "load(e1) &lt;script&gt;") || !strings.Contains(text, `time="2.450"`) {
		t.Error("junit.xml lacks the escaped minimal steps or the time in seconds")
	}
	golden(t, JUnitFile, text)
}

func TestRenderHTML(t *testing.T) {
	dir := renderFixture(t)
	page := readFile(t, filepath.Join(dir, HTMLFile))
	checkHTMLStructure(t, page)

	if n := strings.Count(page, `<div class="cell `); n != 6 {
		t.Errorf("%d matrix cells, want 6", n)
	}
	for _, v := range []string{"pass", "fail", "notrun", "interrupted"} {
		if !strings.Contains(page, `<div class="cell `+v+`">`) {
			t.Errorf("no %s cell in the matrix", v)
		}
	}
	// Two runs have a history: three plots each, drawn by gonum.
	if n := strings.Count(page, "<svg "); n != 6 {
		t.Errorf("%d SVG plots, want 6", n)
	}
	if !strings.Contains(page, "Generated by SVGo") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("plots are not gonum's SVG")
	}
	for _, want := range []string{
		"Broken guarantee: <b>no lost update</b>",
		"Minimal failing sequence (5 steps)",
		"load(e1) &lt;script&gt;alert(1)&lt;/script&gt;",
		"&lt;b&gt;tags&lt;/b&gt;",
		`href="runs/01-rqlite-concurrent/visualization.html"`,
		`href="runs/01-rqlite-concurrent/history.jsonl"`,
		`href="runs/01-rqlite-concurrent/violations.txt"`,
		`href="runs/01-rqlite-concurrent/faults.jsonl"`,
		`href="runs/01-rqlite-concurrent/logs/server-n1.log"`,
		`href="runs/02-rqlite-conformance/rapid.log"`,
		"kill-leader", "not healed", "fault window",
		"connection refused",
		"storecheck qualify --seed 42",
		"2026-01-02 03:04:05 UTC",
		"120", // the memory run's throughput comes from the summary
		`Ran beside runs <a href="#run-3">3</a>, <a href="#run-4">4</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("index.html has a script")
	}
	if m := regexp.MustCompile(`(?i)(src|href)="(https?:)?//|url\(|@import`).FindString(page); m != "" {
		t.Errorf("index.html loads something from outside: %q", m)
	}
	if len(page) > 400_000 {
		t.Errorf("index.html is %d bytes; keep it small", len(page))
	}
}

// checkHTMLStructure checks what a browser would forgive: a doctype, one
// html/head/body, and balanced elements that must be closed.
func checkHTMLStructure(t *testing.T, page string) {
	t.Helper()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Error("no doctype")
	}
	for _, tag := range []string{"html", "head", "body", "main", "header", "footer"} {
		if strings.Count(page, "<"+tag+">")+strings.Count(page, "<"+tag+" ") != 1 || strings.Count(page, "</"+tag+">") != 1 {
			t.Errorf("want exactly one <%s>…</%s>", tag, tag)
		}
	}
	for _, tag := range []string{"section", "article", "table", "thead", "tbody", "tr", "td", "th", "details", "summary", "figure", "svg", "p", "ul", "ol", "li", "div", "a", "code", "pre", "span"} {
		open := len(regexp.MustCompile(`<`+tag+`[\s>]`).FindAllStringIndex(page, -1))
		closed := strings.Count(page, "</"+tag+">")
		if open != closed {
			t.Errorf("<%s>: %d opened, %d closed", tag, open, closed)
		}
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("duplicate id %q", m[1])
		}
		ids[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`href="#([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !ids[m[1]] {
			t.Errorf("link to #%s, which is not on the page", m[1])
		}
	}
}

func TestRenderReadsEveryRunFromItsFolder(t *testing.T) {
	// The memory run's history is measured though the summary holds no
	// latency for it; a run folder outside the report is not read.
	dir := renderFixture(t)
	page := readFile(t, filepath.Join(dir, HTMLFile))
	if !strings.Contains(page, "Latency per operation kind") {
		t.Error("no latency table")
	}
}

func TestRenderBrokenRunFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "fixture"))); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "runs", "01-rqlite-concurrent")
	if err := os.WriteFile(filepath.Join(run, evidence.FaultsFile), []byte("{\"fault\":\"x\",\"start_ns\":1}\ngarbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, evidence.HistoryFile), []byte("{\"client\":0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatalf("a broken run folder must not stop the report: %v", err)
	}
	page := readFile(t, filepath.Join(dir, HTMLFile))
	for _, want := range []string{"faults not shown: runs/01-rqlite-concurrent/faults.jsonl: line 2", "history not measured: "} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks the note %q", want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Render(dir); err == nil || !strings.Contains(err.Error(), SummaryFile) {
		t.Errorf("no summary: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err == nil || !strings.Contains(err.Error(), "not a storecheck summary") {
		t.Errorf("bad summary: %v", err)
	}
	for _, name := range []string{MarkdownFile, HTMLFile, JUnitFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s written from a bad summary", name)
		}
	}
}

func TestRenderOutsideRunFolder(t *testing.T) {
	dir := t.TempDir()
	sum := Summary{Seed: 1, Runs: []Run{{Backend: "memory:", Scenario: "concurrent", Verdict: Pass, Dir: "../elsewhere"}}}
	if err := WriteJSON(filepath.Join(dir, SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	if page := readFile(t, filepath.Join(dir, HTMLFile)); !strings.Contains(page, "is not inside the report folder") {
		t.Error("a run folder outside the report was not refused")
	}
}

func TestRedactText(t *testing.T) {
	for in, want := range map[string]string{
		"plain words: no url":                                      "plain words: no url",
		"sqlite:/tmp/x.db":                                         "sqlite:/tmp/x.db",
		"open postgres://u:pw@h:5432/db failed":                    "open postgres://REDACTED@h:5432/db failed",
		"--backend 'memory:?auth_token=S3' --seed 1":               "--backend 'memory:?auth_token=REDACTED' --seed 1",
		"--backend=rqlite://h:4001/?password=x&level=strong, then": "--backend=rqlite://h:4001/?password=REDACTED&level=strong, then",
	} {
		if got := redactText(in); got != want {
			t.Errorf("redactText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInlineSVG(t *testing.T) {
	got := inlineSVG("<?xml version=\"1.0\"?>\n<!-- Generated -->\n<svg a=\"1\"></svg>\n")
	if got != `<svg a="1"></svg>` {
		t.Errorf("inlineSVG = %q", got)
	}
	if !bytes.HasPrefix([]byte(got), []byte("<svg")) {
		t.Error("prologue kept")
	}
}

func TestRedactKeepsWhatIsNotSecret(t *testing.T) {
	cases := map[string]string{
		"rqlite+process:?nodes=3&rqlited=/tmp/rq/rqlited":           "rqlite+process:?nodes=3&rqlited=/tmp/rq/rqlited",
		"rqlite://u:pw@h:4001?level=strong":                         "rqlite://REDACTED@h:4001?level=strong",
		"libsql+replica:/r.db?primary=http://u:pw@h:8080&token=abc": "libsql+replica:/r.db?primary=http%3A%2F%2FREDACTED%40h%3A8080&token=REDACTED",
		"sqlite:/tmp/x.db": "sqlite:/tmp/x.db",
		"exec:python3 adapters/python/sqlite_store.py --broken no-cas": "exec:python3 adapters/python/sqlite_store.py --broken no-cas",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMatrixPutsTheLongerSideDownThePage: one backend's qualification runs
// a dozen scenarios; as columns they left each cell a few words wide, a
// failure's reason a column of fragments. The longer side goes down the
// page, and every run lands in the cell of its own backend and scenario.
func TestMatrixPutsTheLongerSideDownThePage(t *testing.T) {
	run := func(backend, scenario string) *runView {
		return &runView{Run: Run{Backend: backend, Scenario: scenario}}
	}
	cases := []struct {
		name                string
		backends, scenarios []string
		byBackend           bool
	}{
		{"one backend, three scenarios", []string{"b1"}, []string{"s1", "s2", "s3"}, false},
		{"three backends, two scenarios", []string{"b1", "b2", "b3"}, []string{"s1", "s2"}, true},
		{"as many of each", []string{"b1", "b2"}, []string{"s1", "s2"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := &report{Backends: c.backends, Scenarios: c.scenarios}
			for _, b := range c.backends {
				for _, s := range c.scenarios {
					rep.Runs = append(rep.Runs, run(b, s))
				}
			}
			m := matrix(rep)
			if m.ByBackend != c.byBackend {
				t.Fatalf("rows are backends: %v, want %v", m.ByBackend, c.byBackend)
			}
			rows, cols := c.backends, c.scenarios
			if !c.byBackend {
				rows, cols = c.scenarios, c.backends
			}
			if !slices.Equal(m.Columns, cols) || len(m.Rows) != len(rows) {
				t.Fatalf("columns %v and %d rows, want %v and %d", m.Columns, len(m.Rows), cols, len(rows))
			}
			for i, r := range m.Rows {
				if r.Label != rows[i] {
					t.Errorf("row %d is %q, want %q", i, r.Label, rows[i])
				}
				for j, cell := range r.Cells {
					b, s := r.Label, cols[j]
					if !c.byBackend {
						b, s = cols[j], r.Label
					}
					if len(cell) != 1 || cell[0].Backend != b || cell[0].Scenario != s {
						t.Errorf("cell %s × %s holds %v", r.Label, cols[j], cell)
					}
				}
			}
		})
	}
}

// TestMatrixCellNamesTheKnownIssue: a FAIL a gate may accept as a known
// upstream issue says so in its cell of the verdict matrix, not only in
// the run's section further down, so that the red cell a release manager
// sees first is not read as a new regression.
func TestMatrixCellNamesTheKnownIssue(t *testing.T) {
	known := &runView{Index: 1, Run: Run{Backend: "rqlite+process:?nodes=3", Scenario: "kill-during-install", Verdict: Fail,
		Guarantee: "lost update", KnownIssue: "rqlite-fast-restart-unrestored-snapshot", Seed: 1, Reproduce: "y"}}
	plain := &runView{Index: 2, Run: Run{Backend: "rqlite+process:?nodes=3", Scenario: "leader-kill", Verdict: Fail,
		Guarantee: "lost update", Seed: 1, Reproduce: "z"}}
	rep := &report{Backends: []string{known.Backend}, Scenarios: []string{known.Scenario, plain.Scenario}, Runs: []*runView{known, plain}}
	page, err := renderHTML(rep)
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	start, end := strings.Index(text, `<section id="matrix">`), strings.Index(text, `<section id="performance">`)
	if start < 0 || end < start {
		t.Fatal("no verdict matrix section")
	}
	m := text[start:end]
	if n := strings.Count(m, "Known upstream issue: <b>rqlite-fast-restart-unrestored-snapshot</b>"); n != 1 {
		t.Errorf("the matrix names the known issue %d times, want once (the one FAIL that shows it):\n%s", n, m)
	}
}
