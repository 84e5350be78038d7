package reports

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/storecheck/storecheck/evidence"
)

// Soak files, beside summary.json.
const (
	SoakJSON     = "soak.json"
	SoakMarkdown = "soak.md"
)

// Soak is a false-alarm measurement: runs of backends believed correct,
// over many seeds, on a loaded machine. Every FAIL that is not a known
// upstream issue is a false alarm of storecheck until shown otherwise.
type Soak struct {
	Command string   `json:"command"`
	Seeds   int      `json:"seeds"`
	Runs    int      `json:"runs"`
	Load    SoakLoad `json:"load"`
	// Pairs counts verdicts per backend × scenario.
	Pairs []SoakPair `json:"pairs"`
	// FalseAlarms are the FAILs of correct backends, each with its folder.
	FalseAlarms []SoakRun `json:"false_alarms"`
	// Known are FAILs that match a known upstream issue: real bugs of the
	// server, not false alarms, listed so they stay visible.
	Known []SoakRun `json:"known_issues,omitempty"`
	Notes []string  `json:"notes,omitempty"`
}

// SoakLoad is what the machine was put through while the runs went.
type SoakLoad struct {
	Load      string  `json:"load"`
	CPUs      int     `json:"cpus"`
	Load1Mean float64 `json:"load1_mean"`
	Load1Max  float64 `json:"load1_max"`
	Samples   int     `json:"samples"`
	Seconds   float64 `json:"seconds"`
}

// SoakPair is the verdict count of one backend × scenario.
type SoakPair struct {
	Backend     string `json:"backend"`
	Scenario    string `json:"scenario"`
	Pass        int    `json:"pass"`
	Fail        int    `json:"fail"`
	NotRun      int    `json:"not_run"`
	Interrupted int    `json:"interrupted"`
}

// SoakRun points at one run.
type SoakRun struct {
	Backend  string `json:"backend"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Reason   string `json:"reason"`
	Dir      string `json:"dir,omitempty"`
	Known    string `json:"known_issue,omitempty"`
}

// SoakOf counts a soak's summary.
func SoakOf(sum *Summary, seeds int, l SoakLoad) *Soak {
	s := &Soak{Command: sum.Command, Seeds: seeds, Runs: len(sum.Runs), Load: l, FalseAlarms: []SoakRun{}}
	pairs := map[[2]string]*SoakPair{}
	for _, r := range sum.Runs {
		k := [2]string{r.Backend, r.Scenario}
		p := pairs[k]
		if p == nil {
			p = &SoakPair{Backend: r.Backend, Scenario: r.Scenario}
			pairs[k] = p
		}
		switch r.Verdict {
		case Pass:
			p.Pass++
		case NotRun:
			p.NotRun++
		case Interrupted:
			p.Interrupted++
		case Fail:
			p.Fail++
			run := SoakRun{Backend: r.Backend, Scenario: r.Scenario, Seed: r.Seed, Reason: r.Reason, Dir: r.Dir, Known: r.KnownIssue}
			if r.KnownIssue != "" {
				s.Known = append(s.Known, run)
			} else {
				s.FalseAlarms = append(s.FalseAlarms, run)
			}
		}
	}
	for _, p := range pairs {
		s.Pairs = append(s.Pairs, *p)
	}
	sort.Slice(s.Pairs, func(i, j int) bool {
		a, b := s.Pairs[i], s.Pairs[j]
		return a.Backend < b.Backend || a.Backend == b.Backend && a.Scenario < b.Scenario
	})
	return s
}

// WriteSoak writes soak.json and soak.md into dir.
func WriteSoak(dir string, s *Soak) error {
	if err := WriteJSON(filepath.Join(dir, SoakJSON), s); err != nil {
		return err
	}
	return evidence.WriteFileAtomic(filepath.Join(dir, SoakMarkdown), []byte(s.Markdown()))
}

// Markdown renders the soak for a person.
func (s *Soak) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# storecheck soak: %d false alarms in %d runs\n\n", len(s.FalseAlarms), s.Runs)
	fmt.Fprintf(&b, "- command: `%s`\n- seeds per pair: %d\n", s.Command, s.Seeds)
	fmt.Fprintf(&b, "- load: %s on %d CPUs; 1-minute load average mean %.2f, max %.2f (%d samples over %.0f s)\n\n",
		s.Load.Load, s.Load.CPUs, s.Load.Load1Mean, s.Load.Load1Max, s.Load.Samples, s.Load.Seconds)
	b.WriteString("| backend | scenario | PASS | FAIL | NOT RUN | INTERRUPTED |\n|---|---|---:|---:|---:|---:|\n")
	for _, p := range s.Pairs {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d | %d |\n", p.Backend, p.Scenario, p.Pass, p.Fail, p.NotRun, p.Interrupted)
	}
	section := func(title string, runs []SoakRun) {
		if len(runs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		for _, r := range runs {
			fmt.Fprintf(&b, "- `%s` %s seed %d: %s", r.Backend, r.Scenario, r.Seed, r.Reason)
			if r.Known != "" {
				fmt.Fprintf(&b, " (known issue %s)", r.Known)
			}
			if r.Dir != "" {
				fmt.Fprintf(&b, " — evidence in `%s`", r.Dir)
			}
			b.WriteString("\n")
		}
	}
	section("False alarms (a FAIL of a correct backend: a storecheck defect until shown otherwise)", s.FalseAlarms)
	section("Known upstream issues (real server bugs, not false alarms)", s.Known)
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	return b.String()
}
