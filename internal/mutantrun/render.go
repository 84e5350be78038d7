package mutantrun

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/storecheck/storecheck/reports"
)

// Write prints the table: one line per subject, then one line per miss.
func (t *Table) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tCAUGHT\tBY\tOPS\tTIME\tMINIMAL")
	for _, row := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Name, row.Kind, caughtText(row), byText(row), opsText(row), timeText(row), minimalText(row))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	var b strings.Builder
	notApplicable := 0
	for _, row := range t.Rows {
		for _, r := range row.Runs {
			switch {
			case r.NotApplicable:
				notApplicable++
			case (r.Verdict == reports.NotRun || r.Verdict == reports.Interrupted) && !strings.HasPrefix(r.Reason, "skipped:"):
				fmt.Fprintf(&b, "%s: %s %s: %s\n", row.Name, r.Scenario, r.Verdict, r.Reason)
			}
		}
	}
	if notApplicable > 0 {
		fmt.Fprintf(&b, "%d subject × scenario pairs do not apply (e.g. power-loss on a store without a file): not run, not counted\n", notApplicable)
	}
	fmt.Fprintf(&b, "seeds: %s (from --seed %d); budget %v per run", t.seedsText(), t.Seed, t.Budget)
	if t.Parallel != nil {
		fmt.Fprintf(&b, "; %s", t.Parallel)
	}
	fmt.Fprintln(&b)
	t.Pass()
	fmt.Fprintln(&b, t.verdictLine())
	_, err := io.WriteString(w, b.String())
	return err
}

// verdictLine says the catalogue's verdict (Verdict) and what decided it.
func (t *Table) verdictLine() string {
	undecided := t.Undecided()
	switch t.Verdict() {
	case reports.Pass:
		return "PASS: every mutant caught, no correct backend flagged"
	case reports.Interrupted:
		if len(undecided) == 0 {
			return "INTERRUPTED: stopped as the last runs ended; no survivor, nothing flagged"
		}
		return fmt.Sprintf("INTERRUPTED: no outcome for %v (runs interrupted or never started); no survivor, nothing flagged among the rest", orNone(undecided))
	}
	line := fmt.Sprintf("FAIL: survivors %v, flagged %v", orNone(t.Survivors()), orNone(t.Flagged()))
	if u := t.Unchecked(); len(u) > 0 {
		line += fmt.Sprintf(", not shown to pass %v", orNone(u))
	}
	if len(undecided) > 0 {
		line += fmt.Sprintf(", interrupted (no outcome for %v)", orNone(undecided))
	} else if t.Interrupted {
		line += ", interrupted"
	}
	return line
}

func (t *Table) seedsText() string {
	var parts []string
	for _, sc := range t.Scenarios {
		parts = append(parts, fmt.Sprintf("%s %d", sc, t.Seeds[sc]))
	}
	return strings.Join(parts, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func caughtText(row Row) string {
	switch {
	case row.Undecided():
		return "INTERRUPTED"
	case row.Kind == Correct && row.Caught:
		return "FLAGGED"
	case row.Kind == Correct && !row.Checked():
		return "NOT RUN"
	case row.Kind == Correct:
		return "not flagged"
	case row.Caught:
		return "yes"
	}
	return "NO"
}

// byText names every scenario that failed the subject, soonest first, with
// the guarantee it found broken.
func byText(row Row) string {
	var fails []RunResult
	for _, r := range row.Runs {
		if r.Verdict == reports.Fail {
			fails = append(fails, r)
		}
	}
	if len(fails) == 0 {
		return "-"
	}
	sort.SliceStable(fails, func(i, j int) bool { return fails[i].TimeToCatch < fails[j].TimeToCatch })
	var parts []string
	for _, r := range fails {
		g := r.Guarantee
		if g == "" {
			g = "verdict unknown"
		}
		parts = append(parts, r.Scenario+" ("+g+")")
	}
	return strings.Join(parts, ", ")
}

func opsText(row Row) string {
	if row.By == nil {
		return "-"
	}
	return strconv.FormatInt(row.By.OpsToCatch, 10)
}

func timeText(row Row) string {
	if row.By == nil {
		return "-"
	}
	return row.By.TimeToCatch.Round(time.Millisecond).String()
}

// minimalText is the length of the shortest conformance failing sequence.
func minimalText(row Row) string {
	best := 0
	for _, r := range row.Runs {
		if n := r.MinimalLength(); r.Verdict == reports.Fail && n > 0 && (best == 0 || n < best) {
			best = n
		}
	}
	if best == 0 {
		return "-"
	}
	return strconv.Itoa(best)
}

// Gate is the catalogue's exit code and verdict line: 130 when it was
// interrupted, 1 when a mutant survived or a correct backend was flagged
// or not shown to pass (Pass), else 0. Every report shows it; junit.xml,
// whose cases are the runs (a survivor's all PASS), fails with it.
func (t *Table) Gate() *reports.Gate {
	code := reports.ExitPassed
	switch {
	case t.Interrupted:
		code = reports.ExitInterrupted
	case !t.Pass():
		code = reports.ExitFailed
	}
	return &reports.Gate{ExitCode: code, Headline: t.verdictLine()}
}

// Summary is the table as summary.json: one run per subject × scenario, in
// the schema `storecheck run` writes, so that later report rendering works,
// with the catalogue's gate (Gate). A mutant's runs expect FAIL: the
// reports show its FAIL as the mutant caught, and a mutant no run FAILed
// as a survivor (reports.Outcomes).
func (t *Table) Summary(command string) *reports.Summary {
	s := &reports.Summary{Seed: t.Seed, Command: command, Gate: t.Gate(), Parallel: t.Parallel}
	for _, row := range t.Rows {
		var expect reports.Verdict
		if row.Kind == Mutant {
			expect = reports.Fail
		}
		for _, r := range row.Runs {
			metrics := map[string]float64{}
			for k, v := range r.Metrics {
				metrics[k] = v
			}
			if r.Verdict == reports.Fail {
				metrics["ops_to_catch"] = float64(r.OpsToCatch)
				metrics["ms_to_catch"] = float64(r.TimeToCatch.Milliseconds())
			}
			s.Runs = append(s.Runs, reports.Run{
				Backend: reports.Redact(r.Backend), Scenario: r.Scenario, Verdict: r.Verdict, Expect: expect, Reason: r.Reason,
				Seed: r.Seed, Reproduce: t.reproduce(r), DurationMS: r.Time.Milliseconds(), Ops: r.Ops,
				Guarantee: r.Guarantee, Cases: r.Cases, SequenceDigest: r.SequenceDigest, MinimalSteps: r.MinimalSteps, Dir: r.Dir,
				Metrics: metrics, Options: t.options(row), NotApplicable: r.NotApplicable,
			})
		}
	}
	return s
}

// reproduce is the `storecheck run` command line that repeats one run.
func (t *Table) reproduce(r RunResult) string {
	parts := []string{"storecheck", "run", "--backend", reports.ShellQuote(reports.Redact(r.Backend)), "--scenario", r.Scenario, "--seed", strconv.FormatUint(r.Seed, 10)}
	z := t.Sizing
	switch r.Scenario {
	case "conformance":
		parts = append(parts, "--checks", strconv.Itoa(z.Checks), "--steps", strconv.Itoa(z.Steps))
	default:
		parts = append(parts, "--clients", strconv.Itoa(z.Clients), "--executions", strconv.Itoa(z.Executions))
		if z.Duration > 0 {
			parts = append(parts, "--duration", z.Duration.String())
		} else {
			parts = append(parts, "--ops", strconv.Itoa(z.Ops))
		}
	}
	return strings.Join(parts, " ")
}

// options records the subject's kind and the sizing with every run.
func (t *Table) options(row Row) map[string]string {
	z := t.Sizing
	o := map[string]string{
		"kind": string(row.Kind), "checks": strconv.Itoa(z.Checks), "steps": strconv.Itoa(z.Steps),
		"clients": strconv.Itoa(z.Clients), "executions": strconv.Itoa(z.Executions), "ops": strconv.Itoa(z.Ops),
		"budget": t.Budget.String(),
	}
	if z.Duration > 0 {
		o["duration"] = z.Duration.String()
	}
	return o
}
