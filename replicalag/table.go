package replicalag

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
)

// levelRow is one phase in sweep.json: its counts and its rates.
type levelRow struct {
	*LevelResult
	ConflictRate     float64 `json:"conflict_rate"`
	SpuriousRate     float64 `json:"spurious_rate"`
	RetriesPerCommit float64 `json:"retries_per_commit"`
	StaleReadRate    float64 `json:"stale_read_rate"`
	MaxStalenessMS   float64 `json:"max_staleness_ms"`
	MedianStaleMS    float64 `json:"median_staleness_ms"`
	P99StaleMS       float64 `json:"p99_staleness_ms"`
}

func row(lr *LevelResult) levelRow {
	return levelRow{LevelResult: lr, ConflictRate: lr.ConflictRate(), SpuriousRate: lr.SpuriousRate(),
		RetriesPerCommit: lr.RetriesPerCommit(), StaleReadRate: lr.StaleReadRate(), MaxStalenessMS: ms(lr.MaxStaleness),
		MedianStaleMS: ms(lr.MedianStaleness), P99StaleMS: ms(lr.P99Staleness)}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// write saves sweep.json and sweep.md in the run's folder, and promotes
// the history (and fault log) of the fault phase, or else of the top
// level, to the folder itself, where the reports look for a run's history.
func (r *Result) write(f evidence.Folder) error {
	doc := struct {
		*Result
		Levels []levelRow `json:"levels"`
		Faults *levelRow  `json:"faults,omitempty"`
	}{Result: r}
	for _, lr := range r.Levels {
		doc.Levels = append(doc.Levels, row(lr))
	}
	if r.Faults != nil {
		fr := row(r.Faults)
		doc.Faults = &fr
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("replicalag: %s: %w", evidence.SweepJSONFile, err)
	}
	if _, err := f.WriteFile(evidence.SweepJSONFile, append(raw, '\n')); err != nil {
		return fmt.Errorf("replicalag: %w", err)
	}
	if _, err := f.WriteFile(evidence.SweepMDFile, []byte(r.Markdown())); err != nil {
		return fmt.Errorf("replicalag: %w", err)
	}
	shown := r.Faults
	if shown == nil && len(r.Levels) > 0 {
		shown = r.Levels[len(r.Levels)-1]
	}
	if shown == nil {
		return nil
	}
	if err := f.Promote(shown.Name, evidence.HistoryFile, evidence.FaultsFile); err != nil {
		return fmt.Errorf("replicalag: %w", err)
	}
	return nil
}

// Markdown is sweep.md: what ran, and one table row per phase.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# replica-lag-conflict — %s\n\n", r.Kind)
	if r.Simulation {
		b.WriteString("These figures come from a **simulation** of embedded-replica lag (SQLite primary, each replica a snapshot of it held open and moved forward on a seeded schedule), not from libSQL.\n\n")
	}
	fmt.Fprintf(&b, "Seed %d, schedule digest `%s`, verdict **%s**.", r.Seed, r.Digest, r.Verdict)
	if r.Reason != "" {
		fmt.Fprintf(&b, " %s", r.Reason)
	}
	b.WriteString("\n\n")
	b.WriteString("| phase | lag | updates | commits | conflict rate | spurious rate | retries/commit | gave up | stale reads | staleness p50 / p99 / worst | versions behind | lost updates | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, lr := range r.phases() {
		lag := fmt.Sprint(lr.Lag)
		if lr.LinkRate > 0 {
			lag = fmt.Sprintf("%v, link %d kbit/s", lr.Lag, lr.LinkRate/1000)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.3f | %.3f | %.2f | %d | %.3f | %.1f / %.1f / %.1f ms | %d | %d | %s |\n",
			lr.Name, lag, lr.Updates, lr.Commits, lr.ConflictRate(), lr.SpuriousRate(), lr.RetriesPerCommit(),
			lr.GaveUp, lr.StaleReadRate(), ms(lr.MedianStaleness), ms(lr.P99Staleness), ms(lr.MaxStaleness), lr.MaxBehind, lr.LostUpdates, lr.Verdict)
	}
	b.WriteString("\nlag: the replicas' mean sync interval; on a link level they sync at the top lag over a link slowed to that rate (a token bucket in the kernel, tc tbf, on the veth pair into the primary's network namespace). conflict rate: conflicts per commit attempt. spurious rate: conflicts whose load had already missed a version the primary acknowledged before the load began (they could not have won), per commit attempt. retries/commit: commit attempts beyond the first that a successful update needed. staleness: how long the first version a stale load missed had been acknowledged when the load began (over the stale loads: the median, the 99th percentile and the worst).\n")
	if f := r.Faults; f != nil {
		b.WriteString("\nFaults injected in the fault phase (times on its history's clock):\n\n")
		for _, ft := range f.Faults {
			fmt.Fprintf(&b, "- %s %s from %.0f ms to %.0f ms\n", ft.Fault, ft.Target, float64(ft.StartNS)/1e6, float64(ft.EndNS)/1e6)
		}
	}
	for _, lr := range r.phases() {
		for _, n := range lr.Notes {
			fmt.Fprintf(&b, "\nnote (%s): %s", lr.Name, n)
		}
	}
	b.WriteString("\n")
	return b.String()
}
