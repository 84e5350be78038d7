package reports

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// bigSummary is a qualification of n runs, every third a FAIL with a long
// reason and a long minimal sequence, every fifth NOT RUN, the rest PASS.
func bigSummary(n int) Summary {
	sum := Summary{Seed: 9, Command: "storecheck qualify --seed 9"}
	long := strings.Repeat("a reason that goes on ", 60)
	for i := 0; i < n; i++ {
		r := Run{Index: i + 1, Backend: fmt.Sprintf("sqlite:/tmp/db%03d.db", i), Scenario: "concurrent", Verdict: Pass, Seed: uint64(i)}
		switch {
		case i%3 == 0:
			r.Verdict, r.Guarantee, r.Reason = Fail, "no lost update", long
			r.Reproduce = fmt.Sprintf("storecheck run --backend sqlite:/tmp/db%03d.db --scenario concurrent --seed %d", i, i)
			for s := 0; s < 60; s++ {
				r.MinimalSteps = append(r.MinimalSteps, fmt.Sprintf("commit(e%d, expected=%d, data=%s)", s, s, strings.Repeat("x", 40)))
			}
		case i%5 == 0:
			r.Verdict, r.Reason = NotRun, long
		}
		sum.Runs = append(sum.Runs, r)
	}
	return sum
}

// renderSummary renders sum in a fresh folder and returns summary.md.
func renderSummary(t *testing.T, sum Summary) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	return readFile(t, filepath.Join(dir, MarkdownFile))
}

// TestMarkdownFitsAComment: however many runs fail, summary.md stays
// within a pull-request comment (GitHub takes 65,536 characters), keeps the
// headline and counts, says it was shortened, and leaves no code block
// open; a report that fits is not shortened.
func TestMarkdownFitsAComment(t *testing.T) {
	small := renderSummary(t, bigSummary(6))
	if strings.Contains(small, "shortened") || !strings.Contains(small, "commit(e39") {
		t.Errorf("a small report was shortened:\n%s", small)
	}
	for _, n := range []int{60, 400, 1500} {
		md := renderSummary(t, bigSummary(n))
		if got := utf8.RuneCountInString(md); got > mdMaxTotal {
			t.Errorf("%d runs: summary.md has %d characters, more than %d", n, got, mdMaxTotal)
		}
		for _, want := range []string{"## ❌ storecheck: FAIL", " FAIL · ", "seed `9`", "shortened to fit a pull-request comment", "`summary.json`"} {
			if !strings.Contains(md, want) {
				t.Errorf("%d runs: summary.md lacks %q", n, want)
			}
		}
		if fence := openFence(md); fence != "" {
			t.Errorf("%d runs: summary.md leaves a %s code block open", n, fence)
		}
	}
	// 60 runs fit once the failures are brief: every failure is still
	// there with its reproduce line, and every run in the table.
	md := renderSummary(t, bigSummary(60))
	if strings.Count(md, "storecheck run --backend") != 20 || strings.Count(md, "| `sqlite:") != 60 {
		t.Errorf("60 runs: not every failure and run is shown:\n%s", md)
	}
	// 400 runs fit once the passing runs leave the table.
	md = renderSummary(t, bigSummary(400))
	if !strings.Contains(md, "runs passed: listed in `index.html`") || strings.Contains(md, "| ✅ PASS |") {
		t.Errorf("400 runs: passing runs still in the table")
	}
}

func TestCutAtLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short\n", 100, "short\n"},
		{"one\ntwo\nthree\n", 9, "one\ntwo\n"},
		{"text\n```sh\nlong command line\n```\n", 25, "text\n```sh\n```\n"},
		{"text\n```sh\nlong command line\n```\n", 12, "text\n"},
		{"é\né\né\n", 4, "é\né\n"},
	} {
		if got := cutAtLine(c.in, c.max); got != c.want {
			t.Errorf("cutAtLine(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// TestMarkdownCutKeepsFailuresFirst: when even the runs that did not pass
// do not fit, the table that is cut lists the FAIL rows before the NOT
// RUN ones, so the cut takes NOT RUN rows first.
func TestMarkdownCutKeepsFailuresFirst(t *testing.T) {
	sum := Summary{Seed: 9}
	long := strings.Repeat("a long reason ", 40)
	for i := 0; i < 3000; i++ {
		sum.Runs = append(sum.Runs, Run{Index: i + 1, Backend: fmt.Sprintf("sqlite:/tmp/%s%04d.db", strings.Repeat("n", 30), i), Scenario: "concurrent", Verdict: NotRun, Reason: long})
	}
	sum.Runs = append(sum.Runs, Run{Index: 3001, Backend: "sqlite:/tmp/last.db", Scenario: "concurrent", Verdict: Fail, Guarantee: "no lost update", Reason: long, Seed: 1})
	md := renderSummary(t, sum)
	if n := utf8.RuneCountInString(md); n > mdMaxTotal {
		t.Fatalf("%d characters", n)
	}
	if !strings.Contains(md, "| `sqlite:/tmp/last.db` | concurrent | ❌ FAIL |") {
		t.Errorf("the one FAIL, last in run order, was cut from the table")
	}
}

// TestHeadlineIsTheGates: the header of summary.md says what the exit code
// says. A FAIL accepted as a known upstream issue (--accept-known, exit 0)
// is not headed "❌ FAIL", and a NOT RUN that does not fail the gate is
// named in the header, as gate.headline names it.
func TestHeadlineIsTheGates(t *testing.T) {
	pass := Run{Backend: "memory:", Scenario: "conformance", Verdict: Pass, Seed: 1, Reproduce: "x"}
	known := Run{Backend: "rqlite+process:?nodes=3", Scenario: "kill-during-install", Verdict: Fail, KnownIssue: "rqlite-fast-restart-unrestored-snapshot", Seed: 1, Reproduce: "y"}
	notRun := Run{Backend: "rqlite+process:?nodes=3", Scenario: "leader-kill", Verdict: NotRun, Reason: "no rqlited", Seed: 1, Reproduce: "z"}
	for _, c := range []struct {
		name   string
		runs   []Run
		policy Policy
		want   string
	}{
		{"known issue accepted", []Run{pass, known}, Policy{AcceptKnown: true}, "## ✅ storecheck: PASS (1 FAIL accepted as known upstream issues)"},
		{"known issue not accepted", []Run{pass, known}, Policy{}, "## ❌ storecheck: GATE FAILED: 1 FAIL"},
		{"NOT RUN not failing", []Run{pass, notRun}, Policy{}, "## ✅ storecheck: PASS (1 NOT RUN (not failing the gate))"},
		{"NOT RUN failing", []Run{pass, notRun}, Policy{NotRun: NotRunFailsUnderFlag}, "## ❌ storecheck: GATE FAILED: 1 NOT RUN under --fail-on-not-run"},
	} {
		sum := Summary{Seed: 1, Runs: c.runs}
		sum.Gate = Decide(&sum, c.policy)
		if md := renderSummary(t, sum); !strings.HasPrefix(md, c.want+"\n") {
			t.Errorf("%s (exit %d): summary.md begins\n%.120s\nwant\n%s", c.name, sum.Gate.ExitCode, md, c.want)
		}
	}
}

// TestShardNumbersRunsAsThePlan: a shard's report numbers its runs as
// their folders (runs/NN-…) and the other shards' reports do, by their
// position in the whole plan, not 1, 2, … within the shard.
func TestShardNumbersRunsAsThePlan(t *testing.T) {
	sum := Summary{Seed: 1, Shard: &Shard{K: 2, N: 2, Plan: 4}, Runs: []Run{
		{Backend: "memory:", Scenario: "concurrent", Index: 2, Verdict: Pass, Seed: 1, Reproduce: "x"},
		{Backend: "sqlite::memory:", Scenario: "concurrent", Index: 4, Verdict: Fail, Seed: 1, Reproduce: "y", Reason: "lost update"},
	}}
	sum.Judge(Policy{})
	if md := renderSummary(t, sum); !strings.Contains(md, "#### 4. `sqlite::memory:` · concurrent") {
		t.Errorf("the shard's failure is not numbered 4, as its folder and the plan:\n%s", md)
	}
}
