package reports

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCompareSummaries(t *testing.T) {
	run := func(backend, scenario string, v Verdict) Run {
		return Run{Backend: backend, Scenario: scenario, Verdict: v, Ops: 1000, Throughput: 1000,
			Latency: map[string]Percentiles{AllKinds: {P50: 1, P99: 10}}, Metrics: map[string]float64{"conflict_rate": 0.2, "indeterminate": 0}}
	}
	base := &Summary{Runs: []Run{
		run("sqlite:/b/db/sqlite.db", "concurrent", Pass),
		run("memory:", "concurrent", Pass),
		run("memory:", "conformance", Fail),
		run("libsql:/b/db/libsql.db", "concurrent", Pass),
		run("lagsim:/b/db/lagsim/primary.db?lag=200ms", "concurrent", Pass),
	}}
	slow := run("memory:", "concurrent", Pass)
	slow.Throughput, slow.Latency = 300, map[string]Percentiles{AllKinds: {P50: 1.1, P99: 30}}
	slow.Metrics = map[string]float64{"conflict_rate": 0.4, "indeterminate": 150}
	next := &Summary{Runs: []Run{
		run("sqlite:{dir}/sqlite.db", "concurrent", Fail), // the same cell: before, {out}/db/sqlite.db
		slow,
		run("memory:", "conformance", Pass),
		run("lagsim:{dir}/primary.db?lag=200ms", "concurrent", Pass), // before, {out}/db/lagsim/primary.db
		// libsql's cell is gone
	}}
	d := CompareSummaries(base, next, "/b", "/n", DefaultDiffOptions())
	got := markdownOf(t, d)
	wantRows(t, got,
		"| ❌ | `sqlite:{dir}/sqlite.db` | concurrent | verdict | PASS | FAIL |",
		"| ❌ | `memory:` | concurrent | throughput | 1e+03 ops/s | 300 ops/s | -70% |",
		"| ❌ | `memory:` | concurrent | p99 latency | 10 ms | 30 ms |",
		"| ❌ | `memory:` | concurrent | conflict_rate | 0.2 | 0.4 |",
		"| ❌ | `memory:` | concurrent | indeterminate_rate | 0 | 0.15 |",
		"| ❌ | `libsql:{dir}/libsql.db` | concurrent | verdict | PASS | absent |",
		"| ℹ️ | `memory:` | conformance | verdict | FAIL | PASS |",
		"6 regressions", "4 cells compared",
	)
	if strings.Contains(got, "p50 latency") {
		t.Errorf("a 10%% p50 change is under the 50%% threshold and must not show")
	}
	if n := d.Regressions(); n != 6 {
		t.Errorf("%d regressions, want 6", n)
	}
	quiet := CompareSummaries(base, base, "/b", "/b", DiffOptions{Slowdown: -1, RateRise: -1})
	if quiet.Regressions() != 0 || len(quiet.Changes) != 0 {
		t.Errorf("a summary against itself: %+v", quiet.Changes)
	}
}

// TestDiffWarnsOfOtherParallelism: two summaries made with different
// numbers of runs at once are compared, with a warning in the Markdown;
// the same setting, or a summary that does not say, gives none.
func TestDiffWarnsOfOtherParallelism(t *testing.T) {
	one, two := &Parallel{Runs: 1, TimedCores: 1}, &Parallel{Runs: 2, TimedCores: 2}
	for _, c := range []struct {
		base, new *Parallel
		warn      bool
	}{{one, two, true}, {two, two, false}, {nil, two, false}, {one, nil, false}} {
		d := CompareSummaries(&Summary{Parallel: c.base}, &Summary{Parallel: c.new}, "", "", DefaultDiffOptions())
		var b strings.Builder
		if err := d.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(b.String(), "⚠️") && strings.Contains(b.String(), "runs at once")
		if warned != c.warn {
			t.Errorf("base %v, new %v: warned %v; want %v:\n%s", c.base, c.new, warned, c.warn, b.String())
		}
	}
}

// TestDiffNoteIsMarkdownText: a NOT RUN's reason in the note column is
// server text: it must not end the table row, add markup or HTML to a
// pull-request comment, or be cut inside a character.
func TestDiffNoteIsMarkdownText(t *testing.T) {
	base := &Summary{Runs: []Run{{Backend: "memory:", Scenario: "concurrent", Verdict: Pass}}}
	next := &Summary{Runs: []Run{{Backend: "memory:", Scenario: "concurrent", Verdict: NotRun,
		Reason: "dials | tcp\n<img src=x> **bold** `tick` " + strings.Repeat("→", 200)}}}
	var md strings.Builder
	if err := CompareSummaries(base, next, "", "", DefaultDiffOptions()).WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	got := md.String()
	if !utf8.ValidString(got) {
		t.Errorf("the diff is not valid UTF-8: a note was cut inside a character")
	}
	row := ""
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "concurrent") {
			row = line
		}
	}
	if want := "| ❌ | `memory:` | concurrent | verdict | PASS | NOT RUN | dials \\| tcp &lt;img src=x&gt; \\*\\*bold\\*\\* \\`tick\\` →"; !strings.HasPrefix(row, want) {
		t.Errorf("row\n%s\nwant it to start with\n%s", row, want)
	}
}

// TestDiffCommentFits: a diff of thousands of changed cells is cut to fit a
// pull-request comment, regressions first, saying how many rows were left
// out; WriteMarkdown keeps them all.
func TestDiffCommentFits(t *testing.T) {
	base, next := &Summary{}, &Summary{}
	for i := 0; i < 3000; i++ {
		backend := "sqlite:/tmp/" + strings.Repeat("d", 40) + string(rune('a'+i%26)) + strings.Repeat("x", i%7)
		scenario := "s" + strings.Repeat("c", i%50) + string(rune('0'+i%10))
		base.Runs = append(base.Runs, Run{Backend: backend, Scenario: scenario, Verdict: Pass, Reason: ""})
		v := Fail
		if i%2 == 0 {
			v = NotRun
		}
		next.Runs = append(next.Runs, Run{Backend: backend, Scenario: scenario, Verdict: v, Reason: strings.Repeat("a long server error ", 10)})
	}
	d := CompareSummaries(base, next, "", "", DefaultDiffOptions())
	var full, comment strings.Builder
	if err := d.WriteMarkdown(&full); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteComment(&comment); err != nil {
		t.Fatal(err)
	}
	if utf8.RuneCountInString(full.String()) <= mdMaxTotal {
		t.Fatalf("the test's diff fits a comment anyway (%d characters)", utf8.RuneCountInString(full.String()))
	}
	c := comment.String()
	if n := utf8.RuneCountInString(c); n > mdMaxTotal {
		t.Errorf("the comment has %d characters, more than %d", n, mdMaxTotal)
	}
	reg := d.Regressions()
	if !strings.Contains(c, fmt.Sprintf("❌ %d regressions", reg)) || !strings.Contains(c, "left out to fit a pull-request comment") {
		t.Errorf("the cut comment lacks the full count (%d) or the note:\n%s", reg, c[len(c)-400:])
	}
	if strings.Count(c, "| ❌ |")+1 >= strings.Count(full.String(), "| ❌ |") {
		t.Errorf("nothing was cut")
	}
	small := CompareSummaries(&Summary{Runs: base.Runs[:3]}, &Summary{Runs: next.Runs[:3]}, "", "", DefaultDiffOptions())
	var smallFull, smallComment strings.Builder
	if err := small.WriteMarkdown(&smallFull); err != nil {
		t.Fatal(err)
	}
	if err := small.WriteComment(&smallComment); err != nil {
		t.Fatal(err)
	}
	if smallFull.String() != smallComment.String() {
		t.Errorf("a diff that fits was cut:\n%s", smallComment.String())
	}
}

// TestDiffSeesWhatAGateMustNotMiss: the verdict changes that let a broken
// change through a gate unseen are regressions: a failing cell dropped
// from the plan or made not applicable, a cell that was not checked and
// now FAILs, a FAIL newly put down to a known issue (which --accept-known
// passes), and the second run of a doubled cell gone. Runs of another seed
// or other options are not the same plan: the diff shows them and says so.
func TestDiffSeesWhatAGateMustNotMiss(t *testing.T) {
	run := func(scenario string, v Verdict) Run {
		return Run{Backend: "memory:", Scenario: scenario, Verdict: v, Seed: 7, Options: map[string]string{"checks": "100"}}
	}
	known := run("known", Fail)
	known.KnownIssue = "raft-heartbeat-term-race"
	notApplicable := run("na", NotRun)
	notApplicable.NotApplicable = true
	base := &Summary{Runs: []Run{
		run("dropped", Fail), run("na", Fail), run("notrun", NotRun), run("interrupted", Interrupted), run("known", Fail),
		run("twice", Pass), run("twice", Pass), run("seed", Pass), run("options", Pass),
	}}
	otherSeed, otherOptions := run("seed", Pass), run("options", Pass)
	otherSeed.Seed = 8
	otherOptions.Options = map[string]string{"checks": "1", "steps": "5"}
	next := &Summary{Runs: []Run{
		notApplicable, run("notrun", Fail), run("interrupted", Fail), known,
		run("twice", Pass), otherSeed, otherOptions, run("new", Fail),
	}}
	d := CompareSummaries(base, next, "", "", DefaultDiffOptions())
	got := markdownOf(t, d)
	wantRows(t, got,
		"| ❌ | `memory:` | dropped | verdict | FAIL | absent | the new summary has no such run: the failure is no longer checked |",
		"| ❌ | `memory:` | na | verdict | FAIL | not applicable |",
		"| ❌ | `memory:` | notrun | verdict | NOT RUN | FAIL |",
		"| ❌ | `memory:` | interrupted | verdict | INTERRUPTED | FAIL |",
		"| ❌ | `memory:` | known | verdict | FAIL | FAIL (known issue raft-heartbeat-term-race) | newly put down to a known upstream issue",
		"| ❌ | `memory:` | twice | verdict | PASS | absent |",
		"| ❌ | `memory:` | new | verdict | absent | FAIL | new cell |",
		"| ℹ️ | `memory:` | seed | seed | 7 | 8 |",
		"| ℹ️ | `memory:` | options | options | checks=100 steps unset | checks=1 steps=5 |",
		"2 of the 7 cells compared ran with another seed or other options",
	)
	if n := d.Regressions(); n != 7 {
		t.Errorf("%d regressions, want 7", n)
	}
	seedOnly := CompareSummaries(&Summary{Runs: []Run{run("seed", Pass)}}, &Summary{Runs: []Run{otherSeed}}, "", "", DefaultDiffOptions())
	var head strings.Builder
	if err := seedOnly.WriteMarkdown(&head); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(head.String(), "## storecheck diff: ⚠️ no regression, but not the same plan") || seedOnly.Regressions() != 0 {
		t.Errorf("a diff of runs of another seed, no verdict changed:\n%s", head.String())
	}
	lost, durability := run("g", Fail), run("g", Fail)
	lost.Guarantee, durability.Guarantee = "lost update", "durability"
	other := CompareSummaries(&Summary{Runs: []Run{lost}}, &Summary{Runs: []Run{durability}}, "", "", DefaultDiffOptions())
	if len(other.Changes) != 1 || other.Changes[0].What != "guarantee" || other.Changes[0].New != "durability" {
		t.Errorf("a FAIL on another guarantee is not shown: %+v", other.Changes)
	}
	fixed := CompareSummaries(&Summary{Runs: []Run{known}}, &Summary{Runs: []Run{run("known", Fail)}}, "", "", DefaultDiffOptions())
	if len(fixed.Changes) != 1 || fixed.Regressions() != 0 {
		t.Errorf("a FAIL no longer put down to a known issue is shown, not a regression: %+v", fixed.Changes)
	}
}

// TestDiffOfOtherPlansComparesNoFigures: a cell whose runs had another
// seed or other options ran another plan, so its figures (throughput,
// latency, conflict and indeterminate rates) moving is shown as not
// comparable, never as a regression; a verdict that got worse there is
// still one. Summaries that ran a different number of runs at once make
// the timings (throughput, latency) not comparable, not the rates.
func TestDiffOfOtherPlansComparesNoFigures(t *testing.T) {
	run := func(scenario string, v Verdict) Run {
		return Run{Backend: "memory:", Scenario: scenario, Verdict: v, Seed: 7, Options: map[string]string{"clients": "8"},
			Ops: 1000, Throughput: 1000, Latency: map[string]Percentiles{AllKinds: {P50: 1, P99: 10}}, Metrics: map[string]float64{"conflict_rate": 0.2}}
	}
	slower := func(r Run) Run {
		r.Throughput, r.Latency = 300, map[string]Percentiles{AllKinds: {P50: 1, P99: 30}}
		r.Metrics = map[string]float64{"conflict_rate": 0.4}
		return r
	}
	otherSeed, otherOptions, broke := slower(run("seed", Pass)), slower(run("options", Pass)), run("broke", Fail)
	otherSeed.Seed, broke.Seed = 8, 8
	otherOptions.Options = map[string]string{"clients": "32"}
	base := &Summary{Runs: []Run{run("seed", Pass), run("options", Pass), run("broke", Pass)}}
	d := CompareSummaries(base, &Summary{Runs: []Run{otherSeed, otherOptions, broke}}, "", "", DefaultDiffOptions())
	got := markdownOf(t, d)
	wantRows(t, got,
		"| ❌ | `memory:` | broke | verdict | PASS | FAIL |",
		"| ℹ️ | `memory:` | seed | throughput | 1e+03 ops/s | 300 ops/s | -70%, not comparable: another seed |",
		"| ℹ️ | `memory:` | seed | p99 latency | 10 ms | 30 ms | +200%, not comparable: another seed |",
		"| ℹ️ | `memory:` | seed | conflict_rate | 0.2 | 0.4 | +100%, not comparable: another seed |",
		"| ℹ️ | `memory:` | options | throughput | 1e+03 ops/s | 300 ops/s | -70%, not comparable: other options |",
		"3 of the 3 cells compared ran with another seed or other options",
	)
	if n := d.Regressions(); n != 1 {
		t.Errorf("%d regressions, want 1 (the verdict)", n)
	}
	// The same plan on differently shared machines: the timings do not
	// compare, the rates do.
	same := slower(run("seed", Pass))
	one, two := &Parallel{Runs: 1, TimedCores: 1}, &Parallel{Runs: 2, TimedCores: 2}
	p := CompareSummaries(&Summary{Parallel: one, Runs: []Run{run("seed", Pass)}}, &Summary{Parallel: two, Runs: []Run{same}}, "", "", DefaultDiffOptions())
	got = markdownOf(t, p)
	wantRows(t, got,
		"| ℹ️ | `memory:` | seed | throughput | 1e+03 ops/s | 300 ops/s | -70%, not comparable: other runs at once |",
		"| ❌ | `memory:` | seed | conflict_rate | 0.2 | 0.4 |",
	)
	if n := p.Regressions(); n != 1 {
		t.Errorf("%d regressions, want 1 (the conflict rate)", n)
	}
}

// markdownOf is d as Markdown, logged.
// wantRows fails t for each row the rendered text does not hold.
func wantRows(t *testing.T, text string, rows ...string) {
	t.Helper()
	for _, row := range rows {
		if !strings.Contains(text, row) {
			t.Errorf("missing %q", row)
		}
	}
}

func markdownOf(t *testing.T, d *Diff) string {
	t.Helper()
	var md strings.Builder
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	t.Log(md.String())
	return md.String()
}
