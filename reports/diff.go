package reports

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
)

// DiffOptions set what a regression is, beyond a verdict that got worse.
type DiffOptions struct {
	// Slowdown is the relative change of a timing figure (throughput down,
	// p50 or p99 latency up) that counts as a regression: 0.5 is 50%.
	// Timings on shared machines are noisy; a negative value ignores them.
	Slowdown float64
	// RateRise is the absolute rise of a rate (conflict rate, indeterminate
	// operations per operation) that counts as a regression; negative
	// ignores rates.
	RateRise float64
}

// DefaultDiffOptions: timings must move by half, rates by 0.1 (two
// 300-operation runs of one seed differed by 0.06 in conflict rate on a
// loaded machine).
func DefaultDiffOptions() DiffOptions { return DiffOptions{Slowdown: 0.5, RateRise: 0.1} }

// A Change is one difference between two summaries, for one backend ×
// scenario cell.
type Change struct {
	Backend, Scenario string
	// What changed: "verdict" or the metric's name.
	What      string
	Base, New string
	// Worse marks a regression (it fails the diff); a change that is not
	// worse is shown as information.
	Worse bool
	Note  string
}

// Diff is what changed from a base summary to a new one.
type Diff struct {
	Base, New string // where they were read
	Changes   []Change
	// Cells counts the backend × scenario cells compared, OtherPlan those
	// of them whose runs had another seed or other options.
	Cells, OtherPlan int
	// Caveat, when set, says why some figures do not compare (the two
	// summaries ran different numbers of runs at once).
	Caveat string
}

// Regressions counts the changes that are worse.
func (d *Diff) Regressions() int {
	n := 0
	for _, c := range d.Changes {
		if c.Worse {
			n++
		}
	}
	return n
}

// cellKey names a run for the diff: its backend, with the summary's own
// output folder written {out} (qualify's default backends lived there, and
// two qualifications never share one), and its scenario. dirs are the
// folder as the summary recorded it and as it was read from.
func cellKey(r Run, dirs ...string) [2]string {
	b := r.Backend
	if r.Subject != "" {
		b = r.Subject
	}
	b = OutRelative(b, dirs...)
	// Until each run got files of its own ({dir}), qualify's default
	// backends shared files in {out}/db/: the same backends.
	for _, old := range []string{"{out}/db/lagsim/", "{out}/db/"} {
		b = strings.Replace(b, old, "{dir}/", 1)
	}
	return [2]string{b, r.Scenario}
}

// OutRelative writes an output folder named in backend URL b as {out},
// whether b names it as dirs give it or as its absolute path: a backend
// whose files live in a run's own output folder is the same backend in
// another run's (a diff's cells, a shard's plan).
func OutRelative(b string, dirs ...string) string {
	for _, d := range dirs {
		if d == "" || d == "." || d == "/" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil && abs != "/" {
			b = strings.ReplaceAll(b, abs, "{out}")
		}
		b = strings.ReplaceAll(b, filepath.Clean(d), "{out}")
	}
	return b
}

// cell is a backend × scenario cell of a summary, and which of the runs
// of that cell it is (from 0): a plan may hold one cell twice (the same
// backend given twice), and each run is compared with the base's run of
// the same rank, so that a doubled cell that lost one run is seen.
type cell struct {
	key [2]string
	nth int
}

// cellsOf names every run of s as a cell, in order.
func cellsOf(s *Summary, dir string) []cell {
	seen := map[[2]string]int{}
	out := make([]cell, len(s.Runs))
	for i, r := range s.Runs {
		k := cellKey(r, s.Out, dir)
		out[i] = cell{k, seen[k]}
		seen[k]++
	}
	return out
}

// CompareSummaries diffs new against base. baseDir and newDir are the
// folders the summaries were read from.
func CompareSummaries(base, new *Summary, baseDir, newDir string, opt DiffOptions) *Diff {
	d := &Diff{Caveat: parallelCaveat(base.Parallel, new.Parallel)}
	// On differently shared machines, the timings moved with that.
	timings := ""
	if d.Caveat != "" {
		timings = "other runs at once"
	}
	baseCells := cellsOf(base, baseDir)
	before := make(map[cell]Run, len(base.Runs))
	for i, c := range baseCells {
		before[c] = base.Runs[i]
	}
	seen := map[cell]bool{}
	outcomes := Outcomes(new.Runs)
	for i, c := range cellsOf(new, newDir) {
		r, k := new.Runs[i], c.key
		seen[c] = true
		old, ok := before[c]
		if !ok {
			worse := r.Verdict == Fail || r.Verdict == Interrupted
			note := "new cell"
			if r.Expect == Fail {
				// A mutant's: caught is the outcome wanted.
				worse = outcomes[i] == Survived || r.Verdict == Interrupted
				note = strings.TrimSuffix("new cell, "+outcomeNote(r, outcomes[i]), ", ")
			}
			d.Changes = append(d.Changes, Change{Backend: k[0], Scenario: k[1], What: "verdict", Base: "absent", New: verdictText(r),
				Worse: worse, Note: note})
			continue
		}
		d.Cells++
		plan := planChanges(k, old, r)
		if len(plan) > 0 {
			d.OtherPlan++
			d.Changes = append(d.Changes, plan...)
		}
		d.Changes = append(d.Changes, verdictChange(k, old, r, outcomes[i])...)
		if old.Verdict == Pass && r.Verdict == Pass {
			d.Changes = append(d.Changes, notComparable(metricChanges(k, old, r, opt), otherPlan(plan), timings)...)
		}
	}
	for _, c := range baseCells {
		if !seen[c] {
			old := before[c]
			note := "the new summary has no such run"
			if old.Verdict == Fail {
				note += ": the failure is no longer checked"
			}
			d.Changes = append(d.Changes, Change{Backend: c.key[0], Scenario: c.key[1], What: "verdict", Base: verdictText(old), New: "absent",
				Worse: old.Verdict == Pass || old.Verdict == Fail, Note: note})
		}
	}
	if d.OtherPlan > 0 {
		d.Caveat = strings.TrimSpace(d.Caveat + " " + fmt.Sprintf("%d of the %d cells compared ran with another seed or other options than the base's (the ℹ️ seed and options rows): their verdicts and figures are not those of the same plan, so a figure that moved there is shown as not comparable, never as a regression; a verdict that got worse still is one.", d.OtherPlan, d.Cells))
	}
	return d
}

// planChanges says how the seed and options of a cell's run differ from
// the base's: two runs of other seeds or knobs are not the same plan, so
// a verdict that held, or figures that moved, are shown with that said.
func planChanges(k [2]string, old, r Run) []Change {
	var out []Change
	if old.Seed != r.Seed {
		out = append(out, Change{Backend: k[0], Scenario: k[1], What: "seed", Base: fmt.Sprint(old.Seed), New: fmt.Sprint(r.Seed),
			Note: "another seed: another plan"})
	}
	var was, now []string
	names := map[string]bool{}
	for name := range old.Options {
		names[name] = true
	}
	for name := range r.Options {
		names[name] = true
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		a, okA := old.Options[name]
		b, okB := r.Options[name]
		if a == b && okA == okB {
			continue
		}
		was, now = append(was, optionText(name, a, okA)), append(now, optionText(name, b, okB))
	}
	if len(was) > 0 {
		out = append(out, Change{Backend: k[0], Scenario: k[1], What: "options", Base: strings.Join(was, " "), New: strings.Join(now, " "),
			Note: "other options: another plan"})
	}
	return out
}

// otherPlan says why a cell's figures do not compare, from its
// planChanges: "another seed", "other options", both, or "" (the same
// plan).
func otherPlan(plan []Change) string {
	var why []string
	for _, c := range plan {
		switch c.What {
		case "seed":
			why = append(why, "another seed")
		case "options":
			why = append(why, "other options")
		}
	}
	return strings.Join(why, " and ")
}

// notComparable turns the figure changes of a cell that ran another plan
// (plan, from otherPlan) into information, not regressions: another seed
// draws another workload, other options set another one, and the
// figures move with them. On differently shared machines (timings, from
// parallelCaveat) the timing figures are not comparable either; the
// rates are.
func notComparable(figures []Change, plan, timings string) []Change {
	for i, c := range figures {
		why := plan
		if why == "" && isTiming(c.What) {
			why = timings
		}
		if why != "" {
			figures[i].Worse = false
			figures[i].Note += ", not comparable: " + why
		}
	}
	return figures
}

// optionText is name=value, or name unset.
func optionText(name, value string, ok bool) string {
	if !ok {
		return name + " unset"
	}
	return name + "=" + value
}

// verdictRank orders verdicts from best to worst for a cell: a PASS that
// became anything else is a regression, and so is a FAIL that became NOT
// RUN or INTERRUPTED (the failure is no longer being checked).
func verdictRank(r Run) int {
	switch {
	case r.Verdict == Pass:
		return 0
	case r.Verdict == NotRun && r.NotApplicable:
		return -1 // not comparable
	case r.Verdict == Fail:
		return 1
	default: // NOT RUN, INTERRUPTED
		return 2
	}
}

// verdictChange is the change of a cell's verdict, if any. It is a
// regression when the cell got worse (verdictRank), when it FAILs where
// it did not (it was not run, not applicable or interrupted: as a new
// cell that FAILs), when a FAIL became not applicable (no longer
// checked), or when a FAIL is newly put down to a known upstream issue,
// which a gate with --accept-known lets pass. A new run expected to FAIL
// (a mutant's) that now PASSes or FAILs is judged by its outcome (now):
// a regression when the mutant survived, none when it was caught, here or
// by another of its runs.
func verdictChange(k [2]string, old, r Run, now Outcome) []Change {
	if old.Verdict == r.Verdict && old.NotApplicable == r.NotApplicable && old.KnownIssue == r.KnownIssue {
		if r.Verdict == Fail && r.Guarantee != old.Guarantee {
			// Still failing, on another guarantee: a new failure may hide
			// behind the old one. Shown; timing may move which check
			// fires first.
			return []Change{{Backend: k[0], Scenario: k[1], What: "guarantee", Base: old.Guarantee, New: r.Guarantee,
				Note: "still FAIL, another guarantee broken"}}
		}
		return nil
	}
	c := Change{Backend: k[0], Scenario: k[1], What: "verdict", Base: verdictText(old), New: verdictText(r)}
	if now != "" {
		c.Worse, c.Note = now == Survived, outcomeNote(r, now)
		return []Change{c}
	}
	a, b := verdictRank(old), verdictRank(r)
	newlyKnown := r.Verdict == Fail && old.Verdict == Fail && r.KnownIssue != "" && r.KnownIssue != old.KnownIssue
	c.Worse = a >= 0 && b > a || a == 0 && b < 0 ||
		r.Verdict == Fail && old.Verdict != Fail ||
		old.Verdict == Fail && b < 0 ||
		newlyKnown
	switch {
	case newlyKnown:
		c.Note = "newly put down to a known upstream issue, which --accept-known lets pass"
	case r.Verdict == Fail && r.Guarantee != "":
		c.Note = r.Guarantee
	case r.Verdict != Pass:
		c.Note = clipLine(r.Reason, 120)
	}
	return []Change{c}
}

// outcomeNote says what a run expected to FAIL showed (a mutant's).
func outcomeNote(r Run, o Outcome) string {
	switch o {
	case Caught:
		return "mutant " + r.caughtLine()
	case NotCaughtHere:
		return notCaughtHereLine
	case Survived:
		return survivedLine
	}
	return ""
}

// verdictText is the verdict as the diff shows it: a NOT RUN that does
// not apply as "not applicable", a FAIL a known issue explains with it.
func verdictText(r Run) string {
	switch {
	case r.Verdict == NotRun && r.NotApplicable:
		return "not applicable"
	case r.Verdict == Fail && r.KnownIssue != "":
		return "FAIL (known issue " + r.KnownIssue + ")"
	}
	return string(r.Verdict)
}

// isTiming reports whether metricChanges took the figure what from the
// clock.
func isTiming(what string) bool {
	switch what {
	case "throughput", "p50 latency", "p99 latency":
		return true
	}
	return false
}

// metricChanges compares the figures two passing runs share: throughput
// and the p50/p99 latency of every operation (timings), and the conflict
// and indeterminate rates.
func metricChanges(k [2]string, old, r Run, opt DiffOptions) []Change {
	var out []Change
	add := func(name string, a, b float64, worse bool, unit string) {
		out = append(out, Change{Backend: k[0], Scenario: k[1], What: name, Base: num(a, unit), New: num(b, unit), Worse: worse,
			Note: fmt.Sprintf("%+.0f%%", 100*(b-a)/math.Max(math.Abs(a), 1e-9))})
	}
	if opt.Slowdown >= 0 {
		if a, b := old.Throughput, r.Throughput; a > 0 && b > 0 && b < a*(1-opt.Slowdown) {
			add("throughput", a, b, true, "ops/s")
		}
		ol, nl := old.Latency[AllKinds], r.Latency[AllKinds]
		for _, p := range []struct {
			name string
			a, b float64
		}{{"p50 latency", ol.P50, nl.P50}, {"p99 latency", ol.P99, nl.P99}} {
			if p.a > 0 && p.b > p.a*(1+opt.Slowdown) {
				add(p.name, p.a, p.b, true, "ms")
			}
		}
	}
	if opt.RateRise >= 0 {
		for _, name := range []string{"conflict_rate", "indeterminate_rate"} {
			a, okA := rate(old, name)
			b, okB := rate(r, name)
			if okA && okB && b-a > opt.RateRise {
				add(name, a, b, true, "")
			}
		}
	}
	return out
}

// rate reads a rate metric; indeterminate_rate is derived from the
// indeterminate count over the operations when the run has no such metric.
func rate(r Run, name string) (float64, bool) {
	if v, ok := r.Metrics[name]; ok {
		return v, true
	}
	if name == "indeterminate_rate" && r.Ops > 0 {
		if n, ok := r.Metrics["indeterminate"]; ok {
			return n / float64(r.Ops), true
		}
	}
	return 0, false
}

func num(v float64, unit string) string {
	s := fmt.Sprintf("%.3g", v)
	if unit != "" {
		s += " " + unit
	}
	return s
}

// clipLine is s on one line, at most max runes (never cut inside one).
func clipLine(s string, max int) string {
	return clip(strings.Join(strings.Fields(s), " "), max)
}

// WriteMarkdown writes the diff as Markdown: the headline, the
// regressions, then the other changes, every one of them.
func (d *Diff) WriteMarkdown(w io.Writer) error {
	_, err := io.WriteString(w, d.markdown(-1))
	return err
}

// WriteComment writes the diff as WriteMarkdown does, cut to fit a
// pull-request comment (GitHub takes 65,536 characters): the regressions
// first, then as many other changes as fit, and a last row saying how many
// were left out. The headline counts every regression.
func (d *Diff) WriteComment(w io.Writer) error {
	md := d.markdown(-1)
	if runeCount(md) > mdMaxTotal {
		// The most rows that fit: a few renders, not one per row.
		fit := sort.Search(len(d.Changes)+1, func(rows int) bool { return runeCount(d.markdown(rows)) > mdMaxTotal }) - 1
		md = d.markdown(max(fit, 0))
		// Even no row at all may not fit (a caveat, or paths, of any
		// length): cut at a line, as summary.md's last resort does.
		if runeCount(md) > mdMaxTotal {
			md = cutAtLine(md, mdMaxTotal-runeCount(mdCutNote)) + mdCutNote
		}
	}
	_, err := io.WriteString(w, md)
	return err
}

// markdown is the diff in Markdown with at most rows changes (all when
// rows < 0).
func (d *Diff) markdown(rows int) string {
	var b strings.Builder
	reg := d.Regressions()
	switch {
	case reg > 0:
		fmt.Fprintf(&b, "## storecheck diff: ❌ %d regression%s\n\n", reg, plural(reg))
	case d.OtherPlan > 0:
		fmt.Fprintf(&b, "## storecheck diff: ⚠️ no regression, but not the same plan\n\n")
	default:
		fmt.Fprintf(&b, "## storecheck diff: ✅ no regression\n\n")
	}
	fmt.Fprintf(&b, "Base `%s`, new `%s`: %d cells compared.\n\n", d.Base, d.New, d.Cells)
	if d.Caveat != "" {
		fmt.Fprintf(&b, "⚠️ %s\n\n", d.Caveat)
	}
	changes := append([]Change(nil), d.Changes...)
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Worse && !changes[j].Worse })
	if len(changes) == 0 {
		b.WriteString("No verdict changed and no figure moved beyond its threshold.\n")
		return b.String()
	}
	b.WriteString("| | backend | scenario | what | base | new | note |\n|---|---|---|---|---|---|---|\n")
	var left []Change
	if rows >= 0 && rows < len(changes) {
		changes, left = changes[:rows], changes[rows:]
	}
	for _, c := range changes {
		mark := "ℹ️"
		if c.Worse {
			mark = "❌"
		}
		// The note may be a server's error text: plain text in
		// the cell, no markup, no HTML, no pipe ending it.
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", mark, mdCell(mdCode(c.Backend)), mdCell(mdText(c.Scenario)), c.What, mdCell(mdText(c.Base)), mdCell(mdText(c.New)), mdCell(mdText(c.Note)))
	}
	if len(left) > 0 {
		worse := 0
		for _, c := range left {
			if c.Worse {
				worse++
			}
		}
		fmt.Fprintf(&b, "| … | | | %d more change%s (%d regression%s) left out to fit a pull-request comment: run `storecheck diff` for all | | | |\n",
			len(left), plural(len(left)), worse, plural(worse))
	}
	return b.String()
}

// parallelCaveat warns when two summaries ran different numbers of runs at
// once: the figures of their timed runs were taken on differently shared
// machines. A summary that does not say (written before the field) is
// not guessed at.
func parallelCaveat(base, new *Parallel) string {
	if base == nil || new == nil || *base == *new {
		return ""
	}
	return fmt.Sprintf("The base ran %s, the new %s: timed runs' throughput and latency moved with that, not only with the change, so they are shown as not comparable, never as a regression.", base, new)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
