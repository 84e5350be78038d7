package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

// maxLinks bounds the links shown per run. The files of a run's folder are
// package evidence's; the reports only read them.
const maxLinks = 24

// report is everything the rendered files show. Every text in it has been
// redacted.
type report struct {
	Seed    uint64
	Command string
	Date    time.Time
	// Made says which storecheck, Go and host made the summary ("" for a
	// summary older than the field).
	Made    string
	Overall Verdict
	// Headline is what the header says: the gate's headline when the
	// summary has a gate and was not interrupted, else the overall
	// verdict; HeadVerdict colours it (a gate that failed is red, one that
	// passed with its FAILs accepted as known issues green).
	Headline    string
	HeadVerdict Verdict
	// GateFailed is the gate's headline when its exit code is not 0, ""
	// otherwise: junit.xml shows it as a failing test case when no run's
	// case does (a NOT RUN under --fail-on-not-run is a skipped case).
	GateFailed string
	Counts     []verdictCount
	// Caught counts the runs whose FAIL was expected (a mutant caught);
	// Survivors names the subjects that survived (Outcomes).
	Caught    int
	Survivors []string
	Backends  []string
	Scenarios []string
	Runs      []*runView
}

// verdictCount is how many runs ended with a verdict.
type verdictCount struct {
	Verdict Verdict
	N       int
}

// runView is one run and what its folder holds.
type runView struct {
	// Index is the run's number (Summary.Position): on a shard's summary
	// its position in the whole plan, as its folder's.
	Index int
	Run
	// Outcome is what a run expected to FAIL showed (Outcomes); "" for
	// every other run.
	Outcome Outcome
	// Measured is computed from history.jsonl; nil without a history.
	Measured *Metrics
	Faults   []evidence.Fault
	Links    []link
	// Notes are problems reading the run's folder.
	Notes []string
}

// link is a relative link to a run artifact.
type link struct {
	Name, Href string
}

// load reads the summary's runs and their folders under dir. A run folder
// that cannot be read is a note on the run, not an error: the report of a
// failing release must still be written.
func load(dir string, s *Summary, date time.Time) *report {
	rep := &report{Seed: s.Seed, Command: redactText(s.Command), Date: date.UTC(), Made: made(s)}
	counts := map[Verdict]int{}
	outcomes := Outcomes(s.Runs)
	for i, r := range s.Runs {
		v := &runView{Index: s.Position(i), Run: ScrubRun(r), Outcome: outcomes[i]}
		counts[r.Verdict]++
		switch {
		case v.Outcome == Caught:
			rep.Caught++
		case v.Outcome == Survived && !slices.Contains(rep.Survivors, v.Backend):
			rep.Survivors = append(rep.Survivors, v.Backend)
		}
		if !slices.Contains(rep.Backends, v.Backend) {
			rep.Backends = append(rep.Backends, v.Backend)
		}
		if !slices.Contains(rep.Scenarios, v.Scenario) {
			rep.Scenarios = append(rep.Scenarios, v.Scenario)
		}
		v.readFolder(dir)
		rep.Runs = append(rep.Runs, v)
	}
	for _, verdict := range []Verdict{Pass, Fail, NotRun, Interrupted} {
		rep.Counts = append(rep.Counts, verdictCount{verdict, counts[verdict]})
	}
	// The summary's own verdict when it carries one (a mutant catalogue
	// passes when its mutants' runs FAIL); else the runs' (Overall).
	rep.Overall = s.Verdict
	if rep.Overall == "" {
		rep.Overall = s.Overall()
	}
	rep.Headline, rep.HeadVerdict = string(rep.Overall), rep.Overall
	// The gate's headline says what the exit code says, and why: "GATE
	// FAILED: 1 NOT RUN under --fail-on-not-run" though no run failed, or
	// "PASS (1 FAIL accepted as known upstream issues)" though one did.
	if g := s.Gate; g != nil && rep.Overall != Interrupted {
		rep.Headline = redactText(g.Headline)
		switch {
		case g.ExitCode != 0:
			rep.HeadVerdict = Fail
		case rep.Overall == Fail:
			rep.HeadVerdict = Pass // every FAIL accepted (--accept-known)
		}
	}
	if g := s.Gate; g != nil && g.ExitCode != 0 {
		rep.GateFailed = redactText(g.Headline)
	}
	return rep
}

// failed reports whether the run is a failure: a FAIL that was not
// expected, or a mutant that survived.
func (v *runView) failed() bool {
	return v.Verdict == Fail && v.Outcome != Caught || v.Outcome == Survived
}

// passed reports whether the run is the outcome wanted: a PASS, or a
// mutant's FAIL (caught); a survivor's PASS is not.
func (v *runView) passed() bool {
	return v.Verdict == Pass && v.Outcome != Survived || v.Outcome == Caught
}

// judged is the verdict the run's outcome counts as: a caught mutant's FAIL
// is a pass, a survivor's PASS a failure; any other run's is its verdict.
func (v *runView) judged() Verdict {
	switch {
	case v.failed():
		return Fail
	case v.passed():
		return Pass
	}
	return v.Verdict
}

// Class is the CSS class of the run's outcome (judged).
func (v *runView) Class() string { return verdictClass(v.judged()) }

// Label is the run's verdict as the reports show it: with its outcome
// when it was expected to FAIL ("FAIL · caught", "PASS · survived").
func (v *runView) Label() string {
	if v.Outcome == "" {
		return string(v.Verdict)
	}
	return string(v.Verdict) + " · " + string(v.Outcome)
}

// readFolder fills the links, metrics and faults from the run's folder.
func (v *runView) readFolder(root string) {
	if v.Dir == "" {
		return
	}
	rel := filepath.ToSlash(filepath.Clean(v.Dir))
	if !filepath.IsLocal(v.Dir) {
		v.Notes = append(v.Notes, fmt.Sprintf("run folder %q is not inside the report folder; not read", v.Dir))
		return
	}
	dir := filepath.Join(root, v.Dir)
	folder := evidence.At(dir)
	if _, err := os.Stat(dir); err != nil {
		v.Notes = append(v.Notes, fmt.Sprintf("run folder %s: %v", rel, errors.Unwrap(err)))
		return
	}
	v.Links = artifactLinks(dir, rel)
	if h, err := linearizability.LoadFile(folder.Path(evidence.HistoryFile)); err == nil {
		m := Measure(h)
		v.Measured = &m
	} else if !errors.Is(err, fs.ErrNotExist) {
		v.Notes = append(v.Notes, "history not measured: "+relErr(err, root))
	}
	faults, err := folder.ReadFaults()
	if err != nil {
		v.Notes = append(v.Notes, "faults not shown: "+relErr(err, root))
	}
	for i := range faults {
		faults[i].Fault, faults[i].Target = redactText(faults[i].Fault), redactText(faults[i].Target)
		faults[i].Detail, faults[i].Error = redactText(faults[i].Detail), redactText(faults[i].Error)
	}
	v.Faults = faults
	for i, n := range v.Notes {
		v.Notes[i] = redactText(n)
	}
}

// relErr is err's text with the report folder's path left out.
func relErr(err error, root string) string {
	root = filepath.Clean(root)
	if root == "." {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
}

// artifactLinks lists the files of a run folder worth a link: the known
// artifacts first, in a fixed order, then other logs (server logs).
func artifactLinks(dir, rel string) []link {
	var links []link
	add := func(name string) {
		if len(links) < maxLinks {
			links = append(links, link{Name: name, Href: hrefJoin(rel, name)})
		}
	}
	known := []string{evidence.VisualizationFile, evidence.HistoryFile, evidence.ViolationsFile, evidence.FaultsFile, evidence.RapidLogFile}
	for _, name := range known {
		if isFile(filepath.Join(dir, name)) {
			add(name)
		}
	}
	for _, sub := range []string{".", evidence.LogsDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := path.Join(sub, e.Name())
			if e.Type().IsRegular() && isLog(e.Name()) && !slices.Contains(known, name) {
				add(name)
			}
		}
	}
	return links
}

// isLog reports whether a file name looks like a log worth linking.
func isLog(name string) bool {
	for _, ext := range []string{".log", ".out", ".err", ".txt", ".jsonl"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// hrefJoin is a relative URL for a file of a run folder, each path segment
// escaped.
func hrefJoin(rel, name string) string {
	var segs []string
	for _, s := range strings.Split(path.Join(rel, name), "/") {
		segs = append(segs, url.PathEscape(s))
	}
	return strings.Join(segs, "/")
}

// made describes the binary and machine behind a summary, in one line.
func made(s *Summary) string {
	if s.Storecheck == nil {
		return ""
	}
	out := "storecheck " + s.Storecheck.Version
	if r := s.Storecheck.Revision; r != "" {
		out += " (" + r[:min(12, len(r))]
		if s.Storecheck.Modified {
			out += ", modified"
		}
		out += ")"
	}
	out += ", " + s.Storecheck.Go
	if w := s.Storecheck.Workers; w != "" {
		out += ", workers from " + w
	}
	if h := s.Host; h != nil {
		out += fmt.Sprintf(", %s/%s, %d CPUs", h.OS, h.Arch, h.CPUs)
	}
	if p := s.Parallel; p != nil {
		out += ", " + p.String()
	}
	return out
}
