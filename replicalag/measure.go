package replicalag

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

// LevelResult is what one level (or the fault phase) found.
type LevelResult struct {
	// Name is "lag_200ms" or "faults"; Lag the replicas' sync interval.
	Name string        `json:"name"`
	Lag  time.Duration `json:"lag_ns"`
	// LinkRate is the link's rate in bits per second on a link level; 0
	// on the others.
	LinkRate int64 `json:"link_rate_bps,omitempty"`
	// Verdict is the checker's; Guarantees names every one broken.
	Verdict    linearizability.Verdict `json:"verdict"`
	Guarantees []string                `json:"guarantees,omitempty"`
	// Violations are the first few violations, in words.
	Violations []string `json:"violations,omitempty"`
	// LostUpdates counts the lost-update violations: always 0 for a
	// correct store.
	LostUpdates int `json:"lost_updates"`

	// Updates were started; Done succeeded; GaveUp ran out of attempts;
	// Retries are the commit attempts beyond the first that the done
	// updates needed.
	Updates int `json:"updates"`
	Done    int `json:"done"`
	GaveUp  int `json:"gave_up"`
	Retries int `json:"retries"`
	// Attempts are commit attempts; Commits won; Conflicts lost their CAS;
	// Spurious are conflicts whose load had already missed an
	// acknowledged version; Failed were refused as not applied;
	// Indeterminate ended with their outcome unknown.
	Attempts      int `json:"attempts"`
	Commits       int `json:"commits"`
	Conflicts     int `json:"conflicts"`
	Spurious      int `json:"spurious_conflicts"`
	Failed        int `json:"failed"`
	Indeterminate int `json:"indeterminate"`
	// Reads are replica loads; StaleReads of them missed an acknowledged
	// version; MaxStaleness is how long the worst had been acknowledged,
	// MedianStaleness the median over the stale ones, MaxBehind by how
	// many versions the worst was behind.
	Reads           int           `json:"reads"`
	StaleReads      int           `json:"stale_reads"`
	MaxStaleness    time.Duration `json:"max_staleness_ns"`
	MedianStaleness time.Duration `json:"median_staleness_ns"`
	// P99Staleness is the 99th percentile over the stale loads.
	P99Staleness time.Duration `json:"p99_staleness_ns"`
	MaxBehind    int64         `json:"max_versions_behind"`
	// TrafficMS is how long the traffic ran.
	TrafficMS int64 `json:"traffic_ms"`
	// Faults are the faults injected (fault phase only).
	Faults []evidence.Fault `json:"faults,omitempty"`
	// Notes say what was not checked or could not be injected.
	Notes []string `json:"notes,omitempty"`
}

// addViolations records violations of a check outside the history
// checker: the verdict becomes Illegal and the guarantee is named. Each
// check shows up to maxShownViolations of its own, so that the history
// checker's findings do not hide another check's (the heal's loads and the
// convergence check both name replica convergence).
func (r *LevelResult) addViolations(guarantee string, violations []string) {
	if len(violations) == 0 {
		return
	}
	r.Verdict = linearizability.Illegal
	if !slices.Contains(r.Guarantees, guarantee) {
		r.Guarantees = append(r.Guarantees, guarantee)
	}
	r.Violations = append(r.Violations, violations[:min(len(violations), maxShownViolations)]...)
}

// maxShownViolations caps the violations LevelResult.Violations shows of
// one check.
const maxShownViolations = 5

// measure counts a checked history's attempts, conflicts and staleness.
func measure(h linearizability.History, rep *linearizability.Report, clients []*client) *LevelResult {
	r := &LevelResult{Verdict: rep.Verdict, Guarantees: linearizability.Guarantees(rep.Err), Notes: rep.Notes}
	for i, v := range rep.Violations {
		if errors.Is(v, linearizability.ErrLostUpdate) {
			r.LostUpdates++
		}
		if i < maxShownViolations {
			r.Violations = append(r.Violations, v.Error())
		}
	}
	for _, c := range clients {
		r.Updates += c.stats.updates
		r.Done += c.stats.done
		r.GaveUp += c.stats.gaveUp
		r.Retries += c.stats.retries
	}
	stale := map[int]linearizability.StaleRead{}
	if st := rep.Replica; st != nil {
		r.Reads, r.StaleReads, r.MaxStaleness, r.MaxBehind = st.Reads, len(st.Stale), st.MaxStaleness, st.MaxBehind
		by := make([]time.Duration, 0, len(st.Stale))
		for _, s := range st.Stale {
			stale[s.Op] = s
			by = append(by, s.By)
		}
		if len(by) > 0 {
			slices.Sort(by)
			r.MedianStaleness = by[len(by)/2]
			r.P99Staleness = by[min(len(by)-1, len(by)*99/100)]
		}
	}
	for _, i := range commitsAfterLoads(h) {
		op := &h.Ops[i[1]]
		r.Attempts++
		switch op.Output.Outcome {
		case linearizability.OutcomeOK:
			r.Commits++
		case linearizability.OutcomeConflict:
			r.Conflicts++
			if _, ok := stale[i[0]]; ok {
				r.Spurious++
			}
		case linearizability.OutcomeFailed:
			r.Failed++
		case linearizability.OutcomeIndeterminate:
			r.Indeterminate++
		}
	}
	return r
}

// commitsAfterLoads pairs every traffic commit with the load its client
// made just before it: [load index, commit index]; load index -1 when the
// commit followed no load.
func commitsAfterLoads(h linearizability.History) [][2]int {
	byClient := map[int][]int{}
	for i := range h.Ops {
		if !h.Ops[i].Heal {
			byClient[h.Ops[i].Client] = append(byClient[h.Ops[i].Client], i)
		}
	}
	var out [][2]int
	for _, idx := range byClient {
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(h.Ops[a].Call, h.Ops[b].Call) })
		for j, i := range idx {
			if !h.Ops[i].Kind.IsCommit() {
				continue
			}
			load := -1
			if j > 0 && h.Ops[idx[j-1]].Kind == linearizability.KindLoadForEvent {
				load = idx[j-1]
			}
			out = append(out, [2]int{load, i})
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int { return cmp.Compare(a[1], b[1]) })
	return out
}

// ConflictRate is conflicts per commit attempt.
func (r *LevelResult) ConflictRate() float64 { return ratio(r.Conflicts, r.Attempts) }

// SpuriousRate is spurious conflicts per commit attempt.
func (r *LevelResult) SpuriousRate() float64 { return ratio(r.Spurious, r.Attempts) }

// RetriesPerCommit is how many commit attempts beyond the first an update
// that succeeded needed, on average.
func (r *LevelResult) RetriesPerCommit() float64 { return ratio(r.Retries, r.Done) }

// StaleReadRate is stale loads per replica load.
func (r *LevelResult) StaleReadRate() float64 { return ratio(r.StaleReads, r.Reads) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// metrics are the level's figures, named "<name>_<figure>".
func (r *LevelResult) metrics() map[string]float64 {
	p := r.Name + "_"
	return map[string]float64{
		p + "updates":             float64(r.Updates),
		p + "commits":             float64(r.Commits),
		p + "attempts":            float64(r.Attempts),
		p + "conflicts":           float64(r.Conflicts),
		p + "conflict_rate":       r.ConflictRate(),
		p + "spurious_conflicts":  float64(r.Spurious),
		p + "spurious_rate":       r.SpuriousRate(),
		p + "retries_per_commit":  r.RetriesPerCommit(),
		p + "gave_up":             float64(r.GaveUp),
		p + "failed":              float64(r.Failed),
		p + "indeterminate":       float64(r.Indeterminate),
		p + "stale_read_rate":     r.StaleReadRate(),
		p + "max_staleness_ms":    float64(r.MaxStaleness) / float64(time.Millisecond),
		p + "median_staleness_ms": float64(r.MedianStaleness) / float64(time.Millisecond),
		p + "p99_staleness_ms":    float64(r.P99Staleness) / float64(time.Millisecond),
		p + "max_versions_behind": float64(r.MaxBehind),
		p + "lost_updates":        float64(r.LostUpdates),
		p + "traffic_ms":          float64(r.TrafficMS),
	}
}
