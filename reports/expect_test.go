package reports

import (
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
)

// mutantRuns is a catalogue's summary in little: blind-write caught by
// conformance and passed by concurrent, trace-off-by-one survived (every
// run PASS), split-visible without an outcome (its other run
// interrupted), and a correct backend, memory, whose FAIL is a failure.
func mutantRuns() []Run {
	run := func(backend, scenario string, v Verdict, expect Verdict) Run {
		r := Run{Backend: backend, Scenario: scenario, Verdict: v, Expect: expect, Seed: 7, Reproduce: "storecheck run --backend " + backend, Ops: 10}
		if v == Fail {
			r.Guarantee, r.Reason = "lost update", "lost update: the store accepted the write"
		}
		return r
	}
	return []Run{
		run("mutant:blind-write", "conformance", Fail, Fail),
		run("mutant:blind-write", "concurrent", Pass, Fail),
		run("mutant:trace-off-by-one", "conformance", Pass, Fail),
		run("mutant:trace-off-by-one", "concurrent", Pass, Fail),
		run("mutant:split-visible", "conformance", Pass, Fail),
		run("mutant:split-visible", "concurrent", Interrupted, Fail),
		run("memory:", "conformance", Fail, ""),
	}
}

func TestOutcomes(t *testing.T) {
	got := Outcomes(mutantRuns())
	want := []Outcome{Caught, NotCaughtHere, Survived, Survived, NotCaughtHere, "", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("run %d: outcome %q, want %q", i+1, got[i], want[i])
		}
	}
}

// renderCatalogue writes runs as a mutants summary and renders it.
func renderCatalogue(t *testing.T, runs []Run, gate Gate) string {
	t.Helper()
	dir := t.TempDir()
	sum := &Summary{Seed: 7, Command: "storecheck mutants --seed 7", Runs: runs, Gate: &gate}
	if err := WriteJSON(filepath.Join(dir, SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestJUnitOfMutants: a mutant's run expects FAIL. junit.xml shows a
// caught mutant's FAIL as a passing case saying what caught it, a PASS of
// a mutant another run caught as passing, a survivor's every PASS as a
// failure ("survived"), and a correct backend's FAIL as a failure; a
// catalogue that passes has no failing case at all.
func TestJUnitOfMutants(t *testing.T) {
	dir := renderCatalogue(t, mutantRuns(), Gate{ExitCode: ExitFailed, Headline: "FAIL: survivors trace-off-by-one, flagged memory"})
	var doc junitDoc
	if err := xml.Unmarshal([]byte(readFile(t, filepath.Join(dir, JUnitFile))), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 7 || doc.Failures != 3 || doc.Errors != 1 {
		t.Errorf("tests=%d failures=%d errors=%d, want 7 3 1", doc.Tests, doc.Failures, doc.Errors)
	}
	cases := map[string]junitDocCase{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases[c.ClassName+" "+c.Name] = c
		}
	}
	for key, want := range map[string]string{
		"mutant:blind-write conformance":      "pass: caught: lost update",
		"mutant:blind-write concurrent":       "pass: not caught by this scenario",
		"mutant:trace-off-by-one conformance": "failure: survived: no scenario caught this mutant",
		"mutant:trace-off-by-one concurrent":  "failure: survived: no scenario caught this mutant",
		"mutant:split-visible conformance":    "pass: not caught by this scenario",
		"mutant:split-visible concurrent":     "error: INTERRUPTED",
		"memory: conformance":                 "failure: lost update",
	} {
		c, ok := cases[key]
		got := "pass: " + c.SystemOut
		switch {
		case !ok:
			got = "absent"
		case c.Failure != nil:
			got = "failure: " + c.Failure.Message
		case c.Error != nil:
			got = "error: " + c.Error.Message
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: %.100q, want it to start with %q", key, got, want)
		}
	}

	caught := mutantRuns()[:2]
	dir = renderCatalogue(t, caught, Gate{ExitCode: ExitPassed, Headline: "PASS: every mutant caught, no correct backend flagged"})
	doc = junitDoc{}
	if err := xml.Unmarshal([]byte(readFile(t, filepath.Join(dir, JUnitFile))), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 2 || doc.Failures != 0 || doc.Errors != 0 {
		t.Errorf("a catalogue that passes: tests=%d failures=%d errors=%d, want 2 0 0", doc.Tests, doc.Failures, doc.Errors)
	}
}

// TestReportsOfMutants: summary.md and index.html show a caught mutant as
// the outcome wanted (✅, green), not among the failures, and a survivor
// as a failure.
func TestReportsOfMutants(t *testing.T) {
	dir := renderCatalogue(t, mutantRuns(), Gate{ExitCode: ExitFailed, Headline: "FAIL: survivors trace-off-by-one, flagged memory"})
	md := readFile(t, filepath.Join(dir, MarkdownFile))
	for _, want := range []string{
		"| `mutant:blind-write` | conformance | ✅ FAIL · caught |",
		"| `mutant:blind-write` | concurrent | ✅ PASS · not caught here |",
		"| `mutant:trace-off-by-one` | conformance | ❌ PASS · survived |",
		"| `memory:` | conformance | ❌ FAIL |",
		"(1 FAIL expected: mutant caught)",
		"- **Survived:** a deliberately broken store that no scenario caught",
		"### Mutants caught (FAIL expected)\n\n- ✅ `mutant:blind-write` · conformance: caught: lost update\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	failures := md[strings.Index(md, "### Failures"):strings.Index(md, "### Mutants caught")]
	if strings.Contains(failures, "blind-write") || !strings.Contains(failures, "`memory:` · conformance") {
		t.Errorf("the failures list a caught mutant, or not the correct backend's FAIL:\n%s", failures)
	}
	page := readFile(t, filepath.Join(dir, HTMLFile))
	for _, want := range []string{
		`<span class="badge pass">FAIL · caught</span>`,
		`<span class="badge fail">PASS · survived</span>`,
		`<span class="badge fail">FAIL</span>`,
		`survived: <code>mutant:trace-off-by-one</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}

// TestDiffOfMutants: between two catalogues, a mutant's run is judged by
// its outcome: caught where it passed, or passed where another run still
// catches it, is no regression; a mutant no run catches any more is one,
// and so is a new mutant that survives.
func TestDiffOfMutants(t *testing.T) {
	base := mutantRuns()[:4]
	base[2].Verdict, base[2].Guarantee = Fail, "trace" // trace-off-by-one caught
	next := mutantRuns()[:4]
	next[0].Verdict, next[1].Verdict, next[1].Guarantee = Pass, Fail, "lost update" // blind-write caught by concurrent only
	d := CompareSummaries(&Summary{Runs: base}, &Summary{Runs: next}, "/b", "/n", DiffOptions{Slowdown: -1, RateRise: -1})
	var md strings.Builder
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	got := md.String()
	for _, want := range []string{
		"| ❌ | `mutant:trace-off-by-one` | conformance | verdict | FAIL | PASS | survived: no scenario caught this mutant |",
		"| ℹ️ | `mutant:blind-write` | conformance | verdict | FAIL | PASS | not caught by this scenario",
		"| ℹ️ | `mutant:blind-write` | concurrent | verdict | PASS | FAIL | mutant caught: lost update |",
		"1 regression\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	grown := append(mutantRuns()[:2], Run{Backend: "mutant:new", Scenario: "conformance", Verdict: Pass, Expect: Fail},
		Run{Backend: "mutant:newer", Scenario: "conformance", Verdict: Fail, Expect: Fail, Guarantee: "atomicity"})
	d = CompareSummaries(&Summary{Runs: mutantRuns()[:2]}, &Summary{Runs: grown}, "/b", "/n", DiffOptions{Slowdown: -1, RateRise: -1})
	for _, c := range d.Changes {
		if want := c.Backend == "mutant:new"; c.Worse != want {
			t.Errorf("new cell %s (%s): worse %v, want %v", c.Backend, c.Note, c.Worse, want)
		}
	}
	if len(d.Changes) != 2 {
		t.Errorf("changes %+v, want the two new cells", d.Changes)
	}
}

// An expectation is FAIL or nothing: a summary saying another is not one
// storecheck wrote.
func TestExpectIsFail(t *testing.T) {
	b := []byte(`{"seed":1,"runs":[{"backend":"memory:","scenario":"conformance","verdict":"PASS","expect":"PASS","seed":1,"reproduce":"x","duration_ms":1,"ops":1}]}`)
	if _, err := ParseSummary(b); err == nil || !strings.Contains(err.Error(), `expect "PASS"`) {
		t.Errorf("expect PASS: %v; want it refused", err)
	}
}
