package reports

// A run whose Expect is FAIL checks a deliberately broken store (a mutant
// of storecheck mutants): its FAIL is the outcome wanted, the mutant
// caught. A mutant is caught when any of its runs FAILs; one scenario
// passing it is no miss when another caught it. It survived when every
// run of it finished (none INTERRUPTED) and none FAILed.

// Outcome is what a run with an expectation showed; "" for a run without
// one, whose verdict alone says it.
type Outcome string

const (
	// Caught: expected FAIL, got FAIL.
	Caught Outcome = "caught"
	// NotCaughtHere: expected FAIL, got PASS, and another run of the
	// subject caught it (or one was interrupted, so it has no outcome).
	NotCaughtHere Outcome = "not caught here"
	// Survived: expected FAIL, got PASS, and no run of the subject
	// caught it.
	Survived Outcome = "survived"
)

// subjectOf names what a run checks: its subject, or its backend.
func subjectOf(r Run) string {
	if r.Subject != "" {
		return r.Subject
	}
	return r.Backend
}

// subjectsCaught says, for each subject with an expectation, whether a
// run caught it, and whether one was interrupted.
func subjectsCaught(runs []Run) (caught, interrupted map[string]bool) {
	caught, interrupted = map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		if r.Expect != Fail {
			continue
		}
		s := subjectOf(r)
		caught[s] = caught[s] || r.Verdict == Fail
		interrupted[s] = interrupted[s] || r.Verdict == Interrupted
	}
	return caught, interrupted
}

// Outcomes is the outcome of each of runs ("" for a run without an
// expectation, or one NOT RUN or INTERRUPTED, whose verdict says it).
func Outcomes(runs []Run) []Outcome {
	caught, interrupted := subjectsCaught(runs)
	out := make([]Outcome, len(runs))
	for i, r := range runs {
		if r.Expect != Fail {
			continue
		}
		switch s := subjectOf(r); {
		case r.Verdict == Fail:
			out[i] = Caught
		case r.Verdict != Pass:
		case caught[s] || interrupted[s]:
			out[i] = NotCaughtHere
		default:
			out[i] = Survived
		}
	}
	return out
}

// Good reports whether the outcome is the one wanted: a mutant caught, or
// passed by a scenario while another caught it.
func (o Outcome) Good() bool { return o == Caught || o == NotCaughtHere }

// The reports' words for the outcomes.
const (
	notCaughtHereLine = "not caught by this scenario: the mutant is caught when any of its runs FAILs"
	survivedLine      = "survived: no scenario caught this mutant"
)

// caughtLine says what caught a mutant: the broken guarantee, or the
// reason when the run names none.
func (r Run) caughtLine() string {
	switch {
	case r.Guarantee != "":
		return "caught: " + r.Guarantee
	case r.Reason != "":
		return "caught: " + oneLine(r.Reason)
	}
	return "caught"
}
