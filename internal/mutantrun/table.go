package mutantrun

import (
	"strings"
	"time"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/reports"
)

// RunResult is one subject × scenario run.
type RunResult struct {
	Scenario string          `json:"scenario"`
	Seed     uint64          `json:"seed"`
	Backend  string          `json:"backend"` // the URL as reports show it
	Verdict  reports.Verdict `json:"verdict"`
	// Guarantee names the broken guarantee on FAIL.
	Guarantee string `json:"guarantee,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Ops and Time are the whole run's: for conformance, minimisation
	// included.
	Ops  int64         `json:"ops"`
	Time time.Duration `json:"time_ns"`
	// OpsToCatch and TimeToCatch are the store calls and time until the
	// failure was found: for conformance, until the failing test case
	// ended, before minimisation; for concurrent, the whole run (its
	// checks run on the finished history).
	OpsToCatch  int64         `json:"ops_to_catch"`
	TimeToCatch time.Duration `json:"time_to_catch_ns"`
	Cases       int64         `json:"cases,omitempty"`
	// SequenceDigest identifies the run's plan (reports.Run's): replay
	// compares it to say whether a repeat ran the same plan.
	SequenceDigest string `json:"sequence_digest,omitempty"`
	// MinimalSteps is the shrunk failing sequence (conformance).
	MinimalSteps []string           `json:"minimal_steps,omitempty"`
	Metrics      map[string]float64 `json:"metrics,omitempty"`
	// Dir holds the run's artifacts, relative to the output folder.
	Dir string `json:"dir,omitempty"`
	// NotApplicable marks a NOT RUN whose scenario does not apply to the
	// subject (power-loss on a store without a file).
	NotApplicable bool `json:"not_applicable,omitempty"`
}

// MinimalLength is the number of operations of the shrunk failing sequence;
// 0 when there is none.
func (r RunResult) MinimalLength() int { return conformance.StepCount(r.MinimalSteps) }

// Row is one subject of the table.
type Row struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Breaks string `json:"breaks"`
	// Caught is true when some scenario failed the subject: for a mutant,
	// it was caught; for a correct backend, it was flagged.
	Caught bool        `json:"caught"`
	Runs   []RunResult `json:"runs"`
	// By is the run that caught the subject soonest; nil when none did.
	By *RunResult `json:"by,omitempty"`
}

// settle decides Caught and By from the runs.
func (row *Row) settle() {
	row.Caught, row.By = false, nil
	for i := range row.Runs {
		r := &row.Runs[i]
		if r.Verdict != reports.Fail {
			continue
		}
		if !row.Caught || r.TimeToCatch < row.By.TimeToCatch {
			row.By = r
		}
		row.Caught = true
	}
}

// OK reports whether the row is as it should be: a mutant caught, a
// correct backend not flagged.
func (row Row) OK() bool {
	if row.Kind == Mutant {
		return row.Caught
	}
	return !row.Caught && row.Checked()
}

// Undecided reports whether the row has no outcome because the catalogue
// was interrupted: nothing caught it and one of its runs was interrupted
// (stopped, or never started), so a scenario that could have caught a
// mutant, or shown a correct backend to pass, did not finish. Such a row is
// neither a survivor nor unchecked.
func (row Row) Undecided() bool {
	if row.Caught {
		return false
	}
	for _, r := range row.Runs {
		if r.Verdict == reports.Interrupted {
			return true
		}
	}
	return false
}

// Checked reports whether every scenario that applies actually ran the
// subject and passed it, and at least one did. A correct backend whose runs
// were NOT RUN (could not start, over the budget) was not shown to pass:
// "not flagged" would be a skip read as a pass.
func (row Row) Checked() bool {
	passed := 0
	for _, r := range row.Runs {
		switch {
		case r.Verdict == reports.Pass:
			passed++
		case r.Verdict == reports.NotRun && strings.HasPrefix(r.Reason, "scenario does not apply"):
		default:
			return false
		}
	}
	return passed > 0
}

// Table is the catalogue's result.
type Table struct {
	Seed      uint64            `json:"seed"`
	Seeds     map[string]uint64 `json:"seeds"` // per scenario, derived from Seed
	Scenarios []string          `json:"scenarios"`
	Budget    time.Duration     `json:"budget_ns"`
	Sizing    Sizing            `json:"sizing"`
	Rows      []Row             `json:"rows"`
	// Parallel is how many runs went at once: times to catch are those
	// of a machine the runs shared.
	Parallel *reports.Parallel `json:"parallel,omitempty"`
	// Interrupted is set when the run was stopped before the end.
	Interrupted bool `json:"interrupted,omitempty"`
	// Passed is every mutant caught, no correct backend flagged, and the
	// run not interrupted; see Pass.
	Passed bool `json:"passed"`
}

// Pass reports whether every mutant was caught, no correct backend was
// flagged and the run was not interrupted, and records it in Passed.
func (t *Table) Pass() bool {
	t.Passed = !t.Interrupted
	for _, row := range t.Rows {
		if !row.OK() {
			t.Passed = false
		}
	}
	return t.Passed
}

// Survivors are the mutants every scenario ran and none caught; a mutant
// whose runs were interrupted is Undecided, not a survivor.
func (t *Table) Survivors() []string {
	var out []string
	for _, row := range t.Rows {
		if row.Kind == Mutant && !row.Caught && !row.Undecided() {
			out = append(out, row.Name)
		}
	}
	return out
}

// Flagged are the correct backends some scenario failed.
func (t *Table) Flagged() []string {
	var out []string
	for _, row := range t.Rows {
		if row.Kind == Correct && row.Caught {
			out = append(out, row.Name)
		}
	}
	return out
}

// Unchecked are the correct backends some scenario did not run (could not
// start, over the budget); one whose runs were interrupted is Undecided.
func (t *Table) Unchecked() []string {
	var out []string
	for _, row := range t.Rows {
		if row.Kind == Correct && !row.Caught && !row.Checked() && !row.Undecided() {
			out = append(out, row.Name)
		}
	}
	return out
}

// Undecided are the subjects an interruption left without an outcome (see
// Row.Undecided).
func (t *Table) Undecided() []string {
	var out []string
	for _, row := range t.Rows {
		if row.Undecided() {
			out = append(out, row.Name)
		}
	}
	return out
}

// Verdict is the catalogue's verdict: FAIL when a finished subject is wrong
// (a survivor, a flagged or unchecked correct backend), else INTERRUPTED
// when the run was stopped before the end, else PASS. As for a summary of
// runs (reports.Summary.Overall), a failure found before the interruption
// outranks it.
func (t *Table) Verdict() reports.Verdict {
	switch {
	case len(t.Survivors()) > 0 || len(t.Flagged()) > 0 || len(t.Unchecked()) > 0:
		return reports.Fail
	case t.Interrupted || len(t.Undecided()) > 0:
		return reports.Interrupted
	}
	return reports.Pass
}

// Row returns the row of name, if any.
func (t *Table) Row(name string) (Row, bool) {
	for _, row := range t.Rows {
		if row.Name == name {
			return row, true
		}
	}
	return Row{}, false
}
