package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds that keep summary.md within a pull-request comment (GitHub takes
// 65,536 characters): each reason and step list is cut, and the whole is
// kept under mdMaxTotal runes, with room to spare for a comment tool's own
// header.
const (
	mdMaxReason = 600
	mdMaxSteps  = 40
	mdMaxTotal  = 60000
)

// mdDetail is how much summary.md shows of each run. A report too long at
// one level is written again at the next.
type mdDetail int

const (
	mdFull       mdDetail = iota // every run in the table, every failure in full
	mdBrief                      // failures without their step lists, reasons shorter
	mdNotPassed                  // the table lists only the runs that did not pass
	mdLastResort                 // the same, cut at a line to fit
)

// mdCutNote ends a summary.md that had to be shortened.
const mdCutNote = "\n_This summary was shortened to fit a pull-request comment; every run is in `summary.json` and `index.html`._\n"

// verdictMark is the symbol a verdict gets in Markdown.
func verdictMark(v Verdict) string {
	switch v {
	case Pass:
		return "✅"
	case Fail:
		return "❌"
	case Interrupted:
		return "⏸️"
	}
	return "⚪"
}

// runMark is the symbol of a run's outcome (runView.judged).
func runMark(v *runView) string { return verdictMark(v.judged()) }

// renderMarkdown writes summary.md: in full when it fits a pull-request
// comment, otherwise at the first level of detail that does, saying so.
func renderMarkdown(rep *report) ([]byte, error) {
	for d := mdFull; d < mdLastResort; d++ {
		if md := markdownAt(rep, d); runeCount(md) <= mdMaxTotal {
			return []byte(md), nil
		}
	}
	md := strings.TrimSuffix(markdownAt(rep, mdLastResort), mdCutNote)
	return []byte(cutAtLine(md, mdMaxTotal-runeCount(mdCutNote)) + mdCutNote), nil
}

// markdownAt is summary.md at one level of detail.
func markdownAt(rep *report, d mdDetail) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s storecheck: %s\n\n", verdictMark(rep.HeadVerdict), rep.Headline)
	var counts []string
	for _, c := range rep.Counts {
		counts = append(counts, fmt.Sprintf("%d %s", c.N, c.Verdict))
	}
	caught := ""
	if rep.Caught > 0 {
		caught = fmt.Sprintf(" (%d FAIL expected: mutant%s caught)", rep.Caught, plural(rep.Caught))
	}
	fmt.Fprintf(&b, "**%s**%s · seed `%d` · %s\n\n", strings.Join(counts, " · "), caught, rep.Seed, rep.Date.Format("2006-01-02 15:04 MST"))
	if rep.Command != "" {
		fmt.Fprintf(&b, "Command: %s\n\n", mdCode(rep.Command))
	}
	if rep.Made != "" {
		fmt.Fprintf(&b, "Made by %s\n\n", rep.Made)
	}
	b.WriteString("| Backend | Scenario | Verdict | Ops | Throughput (ops/s) | p99 commit (ms) | Conflict rate |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|\n")
	passed := 0
	rows := rep.Runs
	if d >= mdLastResort {
		// The cut comes at the end: failures first, so that it takes
		// NOT RUN rows before any FAIL.
		rows = slices.Clone(rows)
		slices.SortStableFunc(rows, func(a, b *runView) int { return cmp.Compare(failFirst(a), failFirst(b)) })
	}
	for _, v := range rows {
		if d >= mdNotPassed && v.passed() {
			passed++
			continue
		}
		p, ok := v.latency("commit")
		rate, rok := v.conflictRate()
		verdict := v.Label()
		if v.KnownIssue != "" {
			verdict += " (known issue)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %s | %s | %s |\n",
			mdCell(mdCode(v.Backend)), mdCell(mdText(v.Scenario)), runMark(v), verdict,
			fmtCount(v.Ops), fmtRate(v.throughput()), fmtMS(p.P99, ok), fmtPct(rate, rok))
	}
	if passed > 0 {
		what := "passed"
		if rep.Caught > 0 {
			what = "passed or caught their mutant"
		}
		fmt.Fprintf(&b, "\n%d run%s %s: listed in `index.html`, not here, to fit a pull-request comment.\n", passed, plural(passed), what)
	}
	writeFailures(&b, rep, d)
	writeCaught(&b, rep, d)
	writeNotPassed(&b, rep, d)
	writeServers(&b, rep)
	for _, v := range rep.Runs {
		if v.Replay != nil {
			fmt.Fprintf(&b, "\nReplay of %s: %s\n", mdCode(v.Replay.Of), mdText(v.Replay.String()))
		}
	}
	blankLine(&b)
	b.WriteString("Full report: `index.html` (verdict matrix, performance, plots); JUnit: `junit.xml`.\n")
	if d > mdFull {
		b.WriteString(mdCutNote)
	}
	return b.String()
}

// failFirst orders runs for a table that may be cut: failures (a
// survivor's PASS among them, not a caught mutant's FAIL), then
// INTERRUPTED, then the rest.
func failFirst(v *runView) int {
	switch {
	case v.failed():
		return 0
	case v.Verdict == Interrupted:
		return 1
	}
	return 2
}

// runeCount is how many characters s has. GitHub's limit on a comment,
// 65,536 characters, holds whether it counts code points or UTF-16 units
// (a rune is at most two); mdMaxTotal leaves room below it.
func runeCount(s string) int { return utf8.RuneCountInString(s) }

// cutAtLine is s cut after its last whole line that keeps it within max
// runes; a code block left open by the cut is closed.
func cutAtLine(s string, max int) string {
	if runeCount(s) <= max {
		return s
	}
	r := []rune(s)
	cut := string(r[:max])
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	if fence := openFence(cut); fence != "" {
		// Closing the block must not push the text past max again.
		for runeCount(cut)+len(fence)+1 > max {
			i := strings.LastIndexByte(strings.TrimSuffix(cut, "\n"), '\n')
			if i < 0 {
				return ""
			}
			cut = cut[:i+1]
		}
		if fence = openFence(cut); fence != "" {
			cut += fence + "\n"
		}
	}
	return cut
}

// openFence is the fence of a fenced code block that s leaves open, or "".
func openFence(s string) string {
	open := ""
	for _, line := range strings.Split(s, "\n") {
		switch {
		case open == "" && strings.HasPrefix(line, "```"):
			open = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case open != "" && strings.TrimRight(line, " ") == open:
			open = ""
		}
	}
	return open
}

// writeFailures writes one section per failed run: what broke, the minimal
// sequence, and how to reproduce it.
func writeFailures(b *strings.Builder, rep *report, d mdDetail) {
	maxReason := mdMaxReason
	if d > mdFull {
		maxReason = mdMaxReason / 3
	}
	first := true
	for _, v := range rep.Runs {
		if !v.failed() {
			continue
		}
		if first {
			b.WriteString("\n### Failures\n")
			first = false
		}
		blankLine(b)
		fmt.Fprintf(b, "#### %d. %s · %s\n\n", v.Index, mdCode(v.Backend), mdText(v.Scenario))
		if v.Outcome == Survived {
			b.WriteString("- **Survived:** a deliberately broken store that no scenario caught (this run PASSed)\n")
		}
		if v.Guarantee != "" {
			fmt.Fprintf(b, "- **Broken guarantee:** %s\n", mdText(v.Guarantee))
		}
		if v.KnownIssue != "" {
			fmt.Fprintf(b, "- **Known upstream issue:** `%s` (docs/KNOWN-ISSUES.md): the run's evidence shows it\n", v.KnownIssue)
		}
		if v.Reason != "" {
			fmt.Fprintf(b, "- **Reason:** %s\n", mdText(clip(v.Reason, maxReason)))
		}
		fmt.Fprintf(b, "- **Seed:** `%d`\n", v.Seed)
		if len(v.MinimalSteps) > 0 && d > mdFull {
			fmt.Fprintf(b, "- **Minimal failing sequence:** %d steps, in `index.html`\n", len(v.MinimalSteps))
		} else if len(v.MinimalSteps) > 0 {
			fmt.Fprintf(b, "- **Minimal failing sequence** (%d steps):\n\n", len(v.MinimalSteps))
			steps := v.MinimalSteps
			if len(steps) > mdMaxSteps {
				steps = append(steps[:mdMaxSteps:mdMaxSteps], fmt.Sprintf("… %d more steps in index.html", len(v.MinimalSteps)-mdMaxSteps))
			}
			b.WriteString(mdFence(strings.Join(steps, "\n"), "text"))
		}
		if v.Reproduce != "" {
			b.WriteString("- **Reproduce:**\n\n")
			b.WriteString(mdFence(v.Reproduce, "sh"))
		}
	}
}

// writeCaught lists the runs whose FAIL was expected: the mutants caught,
// each on a line, in full detail only; index.html has them all.
func writeCaught(b *strings.Builder, rep *report, d mdDetail) {
	if rep.Caught == 0 {
		return
	}
	blankLine(b)
	b.WriteString("### Mutants caught (FAIL expected)\n\n")
	if d > mdFull {
		fmt.Fprintf(b, "%d run%s caught their mutant: listed in `index.html`.\n", rep.Caught, plural(rep.Caught))
		return
	}
	for _, v := range rep.Runs {
		if v.Outcome != Caught {
			continue
		}
		fmt.Fprintf(b, "- %s %s · %s: %s", runMark(v), mdCode(v.Backend), mdText(v.Scenario), mdText(v.caughtLine()))
		if n := len(v.MinimalSteps); n > 0 {
			fmt.Fprintf(b, ", minimal failing sequence %d step%s", n, plural(n))
		}
		b.WriteString("\n")
	}
}

// writeNotPassed lists the runs that were not run or were interrupted.
func writeNotPassed(b *strings.Builder, rep *report, d mdDetail) {
	maxReason := mdMaxReason
	if d > mdFull {
		maxReason = mdMaxReason / 3
	}
	first := true
	for _, v := range rep.Runs {
		if v.Verdict == Pass || v.Verdict == Fail {
			continue
		}
		if first {
			blankLine(b)
			b.WriteString("### Not run or interrupted\n\n")
			first = false
		}
		reason := v.Reason
		if reason == "" {
			reason = "no reason given"
		}
		fmt.Fprintf(b, "- %s **%s** %s · %s: %s\n", verdictMark(v.Verdict), v.Verdict, mdCode(v.Backend), mdText(v.Scenario), mdText(clip(reason, maxReason)))
	}
}

// blankLine ends b with one blank line, to start a block.
func blankLine(b *strings.Builder) {
	switch s := b.String(); {
	case strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		b.WriteString("\n")
	default:
		b.WriteString("\n\n")
	}
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// mdText escapes s for Markdown text on one line: no markup, no HTML.
func mdText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := strings.NewReplacer(
		`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
		"#", `\#`, "~", `\~`, "&", "&amp;", "<", "&lt;", ">", "&gt;",
	)
	return r.Replace(s)
}

// mdCode is s as an inline code span, on one line.
func mdCode(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || len(fence) > 1 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdCell makes Markdown fit a table cell: a pipe would end the cell, even
// inside a code span.
func mdCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// mdFence is s as a fenced code block, the fence longer than any run of
// backticks in s.
func mdFence(s, lang string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n\n"
}

// writeServers lists the servers the runs ran against, once each.
func writeServers(b *strings.Builder, rep *report) {
	seen := map[string]bool{}
	var lines []string
	for _, v := range rep.Runs {
		for _, srv := range v.Servers {
			if !seen[srv] {
				seen[srv] = true
				lines = append(lines, fmt.Sprintf("- %s: %s", mdCode(v.Backend), mdText(srv)))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n### Servers\n\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
}
