package cli

import (
	"fmt"
	"io"
	"sync"
	"text/tabwriter"

	"github.com/storecheck/storecheck/reports"
)

// lineProgress prints one plain line as each run starts and ends.
type lineProgress struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
}

func newLineProgress(w io.Writer, quiet bool) *lineProgress { return &lineProgress{w: w, quiet: quiet} }

func (p *lineProgress) Started(backend, scenario string) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "storecheck: %s on %s ...\n", scenario, backend)
}

func (p *lineProgress) Finished(r reports.Run) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "storecheck: %s on %s: %s (%d ops, %d ms)\n", r.Scenario, r.Backend, r.Verdict, r.Ops, r.DurationMS)
}

// printTable prints the verdict of every run, and for failures the reason and
// the command that reproduces it.
func printTable(w io.Writer, s *reports.Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSCENARIO\tVERDICT\tOPS\tTIME")
	for _, r := range s.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\n", r.Backend, r.Scenario, r.Verdict, r.Ops, float64(r.DurationMS)/1000)
	}
	tw.Flush()
	for _, r := range s.Runs {
		if r.Verdict == reports.Pass {
			continue
		}
		fmt.Fprintf(w, "\n%s on %s: %s: %s\n", r.Scenario, r.Backend, r.Verdict, r.Reason)
		for _, step := range r.MinimalSteps {
			fmt.Fprintf(w, "    %s\n", step)
		}
		if r.Verdict == reports.Fail {
			fmt.Fprintf(w, "  reproduce: %s\n", r.Reproduce)
		}
	}
}
