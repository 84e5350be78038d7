package reports

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/storecheck/storecheck/evidence"
)

// File names in a report folder: the summary every other file is rendered
// from, and the rendered files.
const (
	SummaryFile  = "summary.json"
	MarkdownFile = "summary.md"
	HTMLFile     = "index.html"
	JUnitFile    = "junit.xml"
)

// Render reads DIR/summary.json and every run's folder (Run.Dir, relative to
// DIR), and writes next to the summary, each atomically:
//
//   - summary.md, for a pull-request comment: verdict counts, one table row
//     per run, and the reason, seed and reproduce command of each run that did
//     not pass;
//   - index.html, one self-contained page: the verdict matrix, a performance
//     table, and per run its artifacts and plots of latency, throughput and
//     conflict rate over time with the fault windows shaded;
//   - junit.xml, one test case per backend × scenario.
//
// A run folder that cannot be read (a malformed history or fault log) is
// shown as a note on the run, not an error: the report of a failing release
// must still be written. Every URL shown is passed through Redact.
func Render(dir string) error {
	path := filepath.Join(dir, SummaryFile)
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	sum, err := ReadSummary(path)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	when := st.ModTime()
	if !sum.Started.IsZero() {
		when = sum.Started
	}
	rep := load(dir, sum, when)
	outputs := []struct {
		name   string
		render func(*report) ([]byte, error)
	}{
		{MarkdownFile, renderMarkdown},
		{JUnitFile, renderJUnit},
		{HTMLFile, renderHTML},
	}
	// Render everything before writing anything: a failure leaves the
	// previous reports, not a mix.
	files := make([][]byte, len(outputs))
	for i, o := range outputs {
		if files[i], err = o.render(rep); err != nil {
			return fmt.Errorf("render %s: %w", o.name, err)
		}
	}
	for i, o := range outputs {
		if err := evidence.WriteFileAtomic(filepath.Join(dir, o.name), files[i]); err != nil {
			return fmt.Errorf("render: %w", err)
		}
	}
	return nil
}
