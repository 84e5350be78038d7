package reports

import (
	"fmt"
	"strings"
	"time"
)

// SchemaVersion is the version of summary.json's layout: it changes when a
// field changes meaning or goes away (new fields do not change it).
const SchemaVersion = 2

// Build is the storecheck binary that made a summary.
type Build struct {
	// Version is the module version ("(devel)" for a build from a
	// checkout); Revision and Modified the VCS revision it was built from
	// and whether the tree had changes.
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	// Workers names the program the worker processes of the summary's
	// runs started from when it is not the storecheck binary itself: the
	// worker-only build of the same commit ("storecheck-worker").
	Workers string `json:"workers,omitempty"`
}

// Host is the machine a summary was made on.
type Host struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CPUs int    `json:"cpus"`
}

// Finish completes a summary after its runs: the schema version, when it
// ended, the overall verdict and the counts.
func (s *Summary) Finish(b Build, h Host, at time.Time) {
	s.Schema, s.Storecheck, s.Host, s.Finished = SchemaVersion, &b, &h, at.UTC()
	s.Counts = map[Verdict]int{}
	for _, r := range s.Runs {
		s.Counts[r.Verdict]++
	}
	s.Verdict = s.Overall()
}

// Overall is the runs' verdict: FAIL when a run failed, else
// INTERRUPTED when one was interrupted, else PASS when one passed, else
// NOT RUN (nothing could run). The summary's own (Summary.Verdict) is
// this under its gate (Judge): no PASS where the gate failed.
func (s *Summary) Overall() Verdict {
	has := map[Verdict]bool{}
	for _, r := range s.Runs {
		has[r.Verdict] = true
	}
	switch {
	case has[Fail]:
		return Fail
	case has[Interrupted]:
		return Interrupted
	case has[Pass]:
		return Pass
	}
	return NotRun
}

// Judge decides s's gate under p (Decide) and sets the summary's verdict
// to the runs' (Overall) under it, so that summary.json never says PASS
// where the exit code failed: a gate failed with every run PASS or NOT RUN
// failed on a NOT RUN (--fail-on-not-run, or run's and replay's rule), and
// the verdict is NOT RUN; an interrupted command's (exit 130) is
// INTERRUPTED. The other way round a verdict keeps what the runs found: a
// FAIL accepted as a known upstream issue (--accept-known, exit 0) is
// still FAIL, which the gate's headline explains.
func (s *Summary) Judge(p Policy) {
	s.Gate = Decide(s, p)
	s.Verdict = s.Overall()
	if s.Verdict == Pass && s.Gate.ExitCode != ExitPassed {
		s.Verdict = NotRun
		if s.Gate.ExitCode == ExitInterrupted {
			s.Verdict = Interrupted
		}
	}
}

// Gate is a summary's exit code and the reasons for it.
type Gate struct {
	ExitCode int    `json:"exit_code"`
	Headline string `json:"headline"`
	// FailsOnNotRun: the gate was worked out under a rule by which a NOT
	// RUN run fails it (--fail-on-not-run, or run's and replay's).
	FailsOnNotRun bool `json:"fails_on_not_run,omitempty"`
}

// The exit codes of a gate.
const (
	ExitPassed      = 0   // every run passed (or a FAIL was accepted as a known issue)
	ExitFailed      = 1   // a check failed, a run was interrupted, nothing was checked, or a NOT RUN under --fail-on-not-run
	ExitCouldNotRun = 2   // run and replay: the run asked for could not happen
	ExitInterrupted = 130 // the command was interrupted; the summary marks the unfinished runs
)

// The NOT RUN rules a gate is computed under, as its headline names them
// ("2 NOT RUN under --fail-on-not-run"); "" when a NOT RUN does not fail it.
const (
	NotRunFailsUnderFlag = "under --fail-on-not-run"
	NotRunFailsRun       = "(a run asked for could not happen)"
)

// Policy is what a command's gate fails on besides a FAIL (and an
// INTERRUPTED run, and nothing checked), which always fail it.
type Policy struct {
	// NotRun is how a NOT RUN run that applies fails the gate: "" when
	// it does not (qualify, merge), NotRunFailsUnderFlag with exit 1
	// (their --fail-on-not-run), NotRunFailsRun with exit 2 (run and
	// replay, which asked for that one run), unless a FAIL already
	// failed it.
	NotRun string
	// AcceptKnown lets a FAIL that a known upstream issue explains pass.
	AcceptKnown bool
	// Interrupted: the command was interrupted; it exits 130.
	Interrupted bool
}

// Decide is the gate of s under p: its exit code and a headline saying
// why, worked out in this one place so that the two always agree.
func Decide(s *Summary, p Policy) *Gate {
	code := s.exitCode(p.NotRun == NotRunFailsUnderFlag, p.AcceptKnown)
	if p.NotRun == NotRunFailsRun && (code == ExitPassed && s.CouldNotRun() != nil || s.NothingChecked()) {
		code = ExitCouldNotRun
	}
	if p.Interrupted {
		code = ExitInterrupted
	}
	return gateOf(s, code, p.NotRun, p.AcceptKnown)
}

// gateOf says what exit code means for s under the NOT RUN rule it was
// worked out with (Decide): "PASS", or "GATE FAILED: " and what failed it.
func gateOf(s *Summary, code int, notRunRule string, acceptKnown bool) *Gate {
	failOnNotRun := notRunRule == NotRunFailsUnderFlag || notRunRule == NotRunFailsRun
	var fail, known, interrupted, notRun, notApplicable int
	for _, r := range s.Runs {
		switch {
		case r.Verdict == Fail && acceptKnown && r.KnownIssue != "":
			known++
		case r.Verdict == Fail:
			fail++
		case r.Verdict == Interrupted:
			interrupted++
		case r.Verdict == NotRun && r.NotApplicable:
			notApplicable++
		case r.Verdict == NotRun:
			notRun++
		}
	}
	var why []string
	if s.NothingChecked() {
		why = append(why, "nothing was checked (every run NOT RUN)")
	}
	if fail > 0 {
		why = append(why, fmt.Sprintf("%d FAIL", fail))
	}
	if interrupted > 0 {
		why = append(why, fmt.Sprintf("%d INTERRUPTED", interrupted))
	}
	if notRun > 0 && failOnNotRun {
		why = append(why, fmt.Sprintf("%d NOT RUN %s", notRun, notRunRule))
	}
	g := &Gate{ExitCode: code, Headline: "PASS", FailsOnNotRun: failOnNotRun}
	if code == 0 && len(s.Runs) == 0 {
		// Nothing passed: a shard the plan's runs do not reach is not a
		// failure, but not a pass either.
		g.Headline = "NOTHING RAN: " + s.nothingRan()
		return g
	}
	if code != 0 {
		g.Headline = "GATE FAILED"
		if len(why) > 0 {
			g.Headline += ": " + strings.Join(why, ", ")
		}
	}
	var notes []string
	if known > 0 {
		notes = append(notes, fmt.Sprintf("%d FAIL accepted as known upstream issues", known))
	}
	switch {
	case notRun > 0 && s.NothingChecked() && !failOnNotRun:
		// Counted here only when the reasons above do not count it.
		notes = append(notes, fmt.Sprintf("%d NOT RUN", notRun))
	case notRun > 0 && !failOnNotRun:
		notes = append(notes, fmt.Sprintf("%d NOT RUN (not failing the gate)", notRun))
	}
	if notApplicable > 0 {
		notes = append(notes, fmt.Sprintf("%d not applicable", notApplicable))
	}
	if len(notes) > 0 {
		g.Headline += " (" + strings.Join(notes, "; ") + ")"
	}
	return g
}

// nothingRan says why a summary holds no run.
func (s *Summary) nothingRan() string {
	if s.Shard != nil {
		return fmt.Sprintf("shard %d/%d of a %d-run plan holds no run (not a failure)", s.Shard.K, s.Shard.N, s.Shard.Plan)
	}
	return "the plan holds no run"
}
