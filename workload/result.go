package workload

import (
	"fmt"
	"time"

	"github.com/storecheck/storecheck/linearizability"
)

// Result is what a run found.
type Result struct {
	// Verdict is Ok, Illegal or Unknown (the checker ran out of time;
	// never to be read as Ok).
	Verdict linearizability.Verdict
	// Err joins every violation; errors.Is(res.Err,
	// linearizability.ErrLostUpdate) tells whether that guarantee broke.
	Err error
	// Guarantee names the first guarantee broken; "" when none.
	Guarantee string
	Report    *linearizability.Report
	History   linearizability.History
	Counts    Counts
	// Seed is the run's seed; Steps how many steps the clients took;
	// PlanDigest identifies the steps they were to take (PlanDigest).
	Seed       uint64
	Steps      int
	PlanDigest string
	// NotRecovered, when set, says the store did not serve the final reads
	// within linearizability.RecoveryBound after the traffic (wrapping
	// linearizability.ErrNotRecovered): a broken guarantee, availability.
	// The history recorded up to then was checked all the same.
	NotRecovered error
	// Stalled, when set, says the traffic stopped early because no store
	// call returned within its timeout for Config.StallBound (wrapping
	// ErrStalled): a broken guarantee, availability. What was recorded up
	// to then was healed and checked all the same.
	Stalled error
	// Broken, when set, is the error that broke the store for good
	// (model.Breakable: an adapter that broke its protocol, wrapping
	// model.ErrBroken): the traffic stopped there and nothing was healed.
	// What was recorded up to then was checked all the same.
	Broken error
	// TrafficTime is the traffic phase; CheckTime the checker's time
	// (porcupine and global checks).
	TrafficTime, CheckTime time.Duration
	// Artifacts lists the files written to Config.OutDir.
	Artifacts []string
	// Notes are the run's own remarks (the checker's are in Report.Notes).
	Notes []string
}

// Counts tallies the recorded operations, heal reads included.
type Counts struct {
	Ops int
	// ByKind counts operations by kind, then outcome.
	ByKind map[linearizability.Kind]map[linearizability.Outcome]int
	// Commits counts commit and save attempts; Conflicts, Indeterminate and
	// Failed count operations of any kind with that outcome.
	Commits, Conflicts, Indeterminate, Failed int
	// ConflictRate is Conflicts / Commits.
	ConflictRate float64
}

// fill sets the verdict, counts and times from a checked history.
func (r *Result) fill(h linearizability.History, rep *linearizability.Report) {
	r.Verdict, r.Err, r.Guarantee, r.Report, r.History = rep.Verdict, rep.Err, rep.Guarantee(), rep, h
	r.CheckTime = rep.LinearizationTime + rep.GlobalTime
	c := Counts{Ops: len(h.Ops), ByKind: map[linearizability.Kind]map[linearizability.Outcome]int{}}
	for _, op := range h.Ops {
		if c.ByKind[op.Kind] == nil {
			c.ByKind[op.Kind] = map[linearizability.Outcome]int{}
		}
		c.ByKind[op.Kind][op.Output.Outcome]++
		if op.Kind.IsCommit() {
			c.Commits++
		}
		switch op.Output.Outcome {
		case linearizability.OutcomeConflict:
			c.Conflicts++
		case linearizability.OutcomeIndeterminate:
			c.Indeterminate++
		case linearizability.OutcomeFailed:
			c.Failed++
		}
	}
	if c.Commits > 0 {
		c.ConflictRate = float64(c.Conflicts) / float64(c.Commits)
	}
	r.Counts = c
}

// Summary describes the result in a few lines, for a CLI or a test log.
func (r *Result) Summary() []string {
	lines := []string{fmt.Sprintf("verdict %s (seed %d): %d steps, %d operations in %v, checked in %v",
		r.Verdict, r.Seed, r.Steps, r.Counts.Ops, r.TrafficTime.Round(time.Millisecond), r.CheckTime.Round(time.Millisecond))}
	lines = append(lines, fmt.Sprintf("commits %d, conflicts %d (rate %.2f), indeterminate %d, failed %d",
		r.Counts.Commits, r.Counts.Conflicts, r.Counts.ConflictRate, r.Counts.Indeterminate, r.Counts.Failed))
	for _, k := range linearizability.Kinds() {
		outs := r.Counts.ByKind[k]
		if len(outs) == 0 {
			continue
		}
		line := fmt.Sprintf("  %-15s", k)
		for _, o := range linearizability.Outcomes() {
			if n := outs[o]; n > 0 {
				line += fmt.Sprintf(" %s=%d", o, n)
			}
		}
		lines = append(lines, line)
	}
	if r.Guarantee != "" {
		lines = append(lines, "broken: "+fmt.Sprint(linearizability.Guarantees(r.Err)))
	}
	for _, n := range r.Notes {
		lines = append(lines, "note: "+n)
	}
	if r.Report != nil {
		for i, v := range r.Report.Violations {
			if i == 10 {
				lines = append(lines, fmt.Sprintf("… and %d more violations", len(r.Report.Violations)-10))
				break
			}
			lines = append(lines, "  "+v.Error())
		}
		for _, n := range r.Report.Notes {
			lines = append(lines, "note: "+n)
		}
	}
	for _, a := range r.Artifacts {
		lines = append(lines, "wrote "+a)
	}
	return lines
}
