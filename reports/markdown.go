package reports

import (
	"fmt"
	"strings"
)

// Bounds that keep summary.md within a pull-request comment (GitHub takes
// 65,536 characters).
const (
	mdMaxReason = 600
	mdMaxSteps  = 40
)

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

// renderMarkdown writes summary.md.
func renderMarkdown(rep *report) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s storecheck: %s\n\n", verdictMark(rep.HeadVerdict), rep.Headline)
	var counts []string
	for _, c := range rep.Counts {
		counts = append(counts, fmt.Sprintf("%d %s", c.N, c.Verdict))
	}
	fmt.Fprintf(&b, "**%s** · seed `%d` · %s\n\n", strings.Join(counts, " · "), rep.Seed, rep.Date.Format("2006-01-02 15:04 MST"))
	if rep.Command != "" {
		fmt.Fprintf(&b, "Command: %s\n\n", mdCode(rep.Command))
	}
	if rep.Made != "" {
		fmt.Fprintf(&b, "Made by %s\n\n", rep.Made)
	}
	b.WriteString("| Backend | Scenario | Verdict | Ops | Throughput (ops/s) | p99 commit (ms) | Conflict rate |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|\n")
	for _, v := range rep.Runs {
		p, ok := v.latency("commit")
		rate, rok := v.conflictRate()
		verdict := string(v.Verdict)
		if v.KnownIssue != "" {
			verdict += " (known issue)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %s | %s | %s |\n",
			mdCell(mdCode(v.Backend)), mdCell(mdText(v.Scenario)), verdictMark(v.Verdict), verdict,
			fmtCount(v.Ops), fmtRate(v.throughput()), fmtMS(p.P99, ok), fmtPct(rate, rok))
	}
	writeFailures(&b, rep)
	writeNotPassed(&b, rep)
	writeServers(&b, rep)
	for _, v := range rep.Runs {
		if v.Replay != nil {
			fmt.Fprintf(&b, "\nReplay of %s: %s\n", mdCode(v.Replay.Of), mdText(v.Replay.String()))
		}
	}
	blankLine(&b)
	b.WriteString("Full report: `index.html` (verdict matrix, performance, plots); JUnit: `junit.xml`.\n")
	return []byte(b.String()), nil
}

// writeFailures writes one section per failed run: what broke, the minimal
// sequence, and how to reproduce it.
func writeFailures(b *strings.Builder, rep *report) {
	first := true
	for _, v := range rep.Runs {
		if v.Verdict != Fail {
			continue
		}
		if first {
			b.WriteString("\n### Failures\n")
			first = false
		}
		blankLine(b)
		fmt.Fprintf(b, "#### %d. %s · %s\n\n", v.Index, mdCode(v.Backend), mdText(v.Scenario))
		if v.Guarantee != "" {
			fmt.Fprintf(b, "- **Broken guarantee:** %s\n", mdText(v.Guarantee))
		}
		if v.KnownIssue != "" {
			fmt.Fprintf(b, "- **Known upstream issue:** `%s` (docs/KNOWN-ISSUES.md): the run's evidence shows it\n", v.KnownIssue)
		}
		if v.Reason != "" {
			fmt.Fprintf(b, "- **Reason:** %s\n", mdText(clip(v.Reason, mdMaxReason)))
		}
		fmt.Fprintf(b, "- **Seed:** `%d`\n", v.Seed)
		if len(v.MinimalSteps) > 0 {
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

// writeNotPassed lists the runs that were not run or were interrupted.
func writeNotPassed(b *strings.Builder, rep *report) {
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
		fmt.Fprintf(b, "- %s **%s** %s · %s: %s\n", verdictMark(v.Verdict), v.Verdict, mdCode(v.Backend), mdText(v.Scenario), mdText(clip(reason, mdMaxReason)))
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
