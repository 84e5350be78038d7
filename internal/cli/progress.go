package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// progressMode says how a long command shows that it is alive.
type progressMode int

const (
	progressQuiet progressMode = iota // nothing until the final table
	progressPlain                     // a line per run and a line every plainEvery
	progressLive                      // one line redrawn in place, on a terminal
)

const (
	liveEvery  = 250 * time.Millisecond
	plainEvery = 10 * time.Second
)

// chooseProgress picks live output on a terminal, plain lines otherwise.
func chooseProgress(w io.Writer, quiet bool) progressMode {
	if quiet {
		return progressQuiet
	}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return progressLive
		}
	}
	return progressPlain
}

// progress shows each run starting and ending and, while it runs, the
// operations done, the time elapsed and the fault now injected.
type progress struct {
	w    io.Writer
	mode progressMode

	mu      sync.Mutex
	running map[string]ticker // by runKey: under --parallel, several at once
}

// ticker is the goroutine that shows one running run.
type ticker struct{ stop, stopped chan struct{} }

func newProgress(w io.Writer, mode progressMode) *progress {
	return &progress{w: w, mode: mode, running: map[string]ticker{}}
}

// runKey names a running run: runs of one backend never overlap (see
// runner.Execute), so backend and scenario are enough.
func runKey(backend, scenario string) string { return scenario + " on " + backend }

func (p *progress) Started(backend, scenario string, live *scenarios.Progress) {
	if p.mode == progressQuiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == progressPlain {
		fmt.Fprintf(p.w, "storecheck: %s on %s: started\n", scenario, backend)
	}
	tk := ticker{make(chan struct{}), make(chan struct{})}
	p.running[runKey(backend, scenario)] = tk
	go p.tick(backend, scenario, live, time.Now(), tk.stop, tk.stopped)
}

// tick redraws (live) or prints (plain) the state of the running run until
// stop is closed.
func (p *progress) tick(backend, scenario string, live *scenarios.Progress, start time.Time, stop, stopped chan struct{}) {
	defer close(stopped)
	every := plainEvery
	if p.mode == progressLive {
		every = liveEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		line := fmt.Sprintf("storecheck: %s on %s: %d ops, %s", scenario, backend, live.Ops.Load(), time.Since(start).Round(time.Second))
		if f := live.CurrentFault(); f != "" {
			line += ", fault: " + f
		}
		p.mu.Lock()
		if p.mode == progressLive {
			fmt.Fprintf(p.w, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(p.w, line)
		}
		p.mu.Unlock()
	}
}

func (p *progress) Finished(r reports.Run) {
	if p.mode == progressQuiet {
		return
	}
	p.mu.Lock()
	tk, ok := p.running[runKey(r.Backend, r.Scenario)]
	delete(p.running, runKey(r.Backend, r.Scenario))
	p.mu.Unlock()
	if ok {
		close(tk.stop)
		<-tk.stopped
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == progressLive {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "storecheck: %s on %s: %s (%d ops, %.1fs)\n", r.Scenario, r.Backend, r.Verdict, r.Ops, float64(r.DurationMS)/1000)
}

// printTable prints the verdict of every run, and for every run that did not
// pass the reason and, for failures, the minimal sequence and the command
// that reproduces it.
func printTable(w io.Writer, s *reports.Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tSCENARIO\tVERDICT\tOPS\tTIME")
	for _, r := range s.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\n", r.Backend, r.Scenario, r.Verdict, r.Ops, float64(r.DurationMS)/1000)
	}
	tw.Flush()
	if len(s.Runs) == 0 && s.Shard != nil {
		fmt.Fprintf(w, "shard %d/%d of a %d-run plan: no run falls to it\n", s.Shard.K, s.Shard.N, s.Shard.Plan)
	}
	for _, r := range s.Runs {
		if r.Verdict == reports.Pass {
			continue
		}
		fmt.Fprintf(w, "\n%s on %s: %s: %s\n", r.Scenario, r.Backend, r.Verdict, r.Reason)
		if r.Verdict == reports.Fail && r.KnownIssue != "" {
			fmt.Fprintf(w, "  known upstream issue: %s (docs/KNOWN-ISSUES.md#%s): the run's evidence shows it\n", r.KnownIssue, r.KnownIssue)
		}
		for _, step := range r.MinimalSteps {
			fmt.Fprintf(w, "    %s\n", step)
		}
		if r.Verdict == reports.Fail {
			fmt.Fprintf(w, "  reproduce: %s\n", r.Reproduce)
		}
	}
	if g := s.Gate; g != nil {
		// What the exit code says and why: the table alone shows a PASS
		// and a NOT RUN where --fail-on-not-run exits 1, or a FAIL
		// where --accept-known exits 0.
		fmt.Fprintf(w, "\ngate: %s (exit %d)\n", g.Headline, g.ExitCode)
	}
}
