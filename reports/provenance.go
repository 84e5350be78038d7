package reports

import "time"

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

// Overall is the summary's verdict: FAIL when a run failed, else
// INTERRUPTED when one was interrupted, else PASS when one passed, else
// NOT RUN (nothing could run).
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
