package reports

import (
	"math"
	"slices"
	"time"

	"github.com/storecheck/storecheck/linearizability"
)

// AllKinds is the key of Metrics.Latency and Run.Latency that covers every
// operation kind together.
const AllKinds = "all"

// Percentiles summarise the latencies of one operation kind, in milliseconds.
// Count is every traffic operation of the kind; Timed those with a latency
// (an indeterminate operation has none: its effect, and so its end, is
// unknown).
type Percentiles struct {
	Count int     `json:"count"`
	Timed int     `json:"timed"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Metrics are the performance figures of one recorded history. Heal reads
// (Operation.Heal, taken after the traffic with faults healed) are left out
// of every figure but HealOps.
type Metrics struct {
	// Ops counts traffic operations; HealOps the heal reads left out.
	Ops, HealOps int
	// Commits counts commit and save attempts; Conflicts, Indeterminate and
	// Failed count operations with that outcome.
	Commits, Conflicts, Indeterminate, Failed int
	// ConflictRate is Conflicts / Commits (0 without commits).
	ConflictRate float64
	// Latency is per operation kind, plus AllKinds; the same shape as
	// Run.Latency.
	Latency map[string]Percentiles
	// Throughput is Ops per second of Span; the same as Run.Throughput.
	Throughput float64
	// Start and End bound the traffic, in the history's nanoseconds: the
	// first call and the last return (an indeterminate operation ends when
	// its error was observed).
	Start, End int64
	// Span is End − Start.
	Span time.Duration
	// Series is the traffic over time, for plots.
	Series []Bucket
}

// Fill copies the figures a summary keeps into r: Latency, Throughput and the
// conflict rate among r.Metrics.
func (m Metrics) Fill(r *Run) {
	if m.Ops == 0 {
		return
	}
	r.Latency, r.Throughput = m.Latency, m.Throughput
	if r.Metrics == nil {
		r.Metrics = map[string]float64{}
	}
	r.Metrics["conflict_rate"] = m.ConflictRate
}

// Measure computes the metrics of h: counts, latency percentiles per kind,
// throughput over the traffic span, conflict rate, and a time series.
func Measure(h linearizability.History) Metrics {
	m := Metrics{Latency: map[string]Percentiles{}}
	traffic := make([]linearizability.Operation, 0, len(h.Ops))
	for _, op := range h.Ops {
		if op.Heal {
			m.HealOps++
			continue
		}
		traffic = append(traffic, op)
	}
	if len(traffic) == 0 {
		return m
	}
	m.Ops = len(traffic)
	m.Start, m.End = span(traffic)
	m.Span = time.Duration(m.End - m.Start)
	if s := m.Span.Seconds(); s > 0 {
		m.Throughput = float64(m.Ops) / s
	}

	byKind := map[string][]float64{}
	counts := map[string]int{}
	var all []float64
	for _, op := range traffic {
		k := string(op.Kind)
		counts[k]++
		if op.Kind.IsCommit() {
			m.Commits++
		}
		switch op.Output.Outcome {
		case linearizability.OutcomeConflict:
			m.Conflicts++
		case linearizability.OutcomeIndeterminate:
			m.Indeterminate++
			continue // no latency
		case linearizability.OutcomeFailed:
			m.Failed++
		}
		ms := latencyMS(op)
		byKind[k] = append(byKind[k], ms)
		all = append(all, ms)
	}
	if m.Commits > 0 {
		m.ConflictRate = float64(m.Conflicts) / float64(m.Commits)
	}
	for k, n := range counts {
		m.Latency[k] = percentiles(n, byKind[k])
	}
	m.Latency[AllKinds] = percentiles(m.Ops, all)
	m.Series = series(traffic, m.Start, m.End)
	return m
}

// span is the first call and the last end of ops.
func span(ops []linearizability.Operation) (start, end int64) {
	start, end = math.MaxInt64, math.MinInt64
	for _, op := range ops {
		start = min(start, op.Call)
		end = max(end, endTime(op))
	}
	return start, max(end, start)
}

// endTime is when an operation's caller got its answer: its return, or for
// an indeterminate operation the time its error was observed (its Return is
// linearizability.EndOfHistory).
func endTime(op linearizability.Operation) int64 {
	if op.Output.Outcome == linearizability.OutcomeIndeterminate || op.Return == linearizability.EndOfHistory {
		return max(op.Output.Observed, op.Call)
	}
	return op.Return
}

// latencyMS is an operation's latency in milliseconds.
func latencyMS(op linearizability.Operation) float64 {
	return float64(endTime(op)-op.Call) / float64(time.Millisecond)
}

// percentiles summarises the latencies ms (reordered in place) of count
// operations.
func percentiles(count int, ms []float64) Percentiles {
	p := Percentiles{Count: count, Timed: len(ms)}
	if len(ms) == 0 {
		return p
	}
	slices.Sort(ms)
	p.P50, p.P95, p.P99 = rank(ms, 50), rank(ms, 95), rank(ms, 99)
	p.Max = ms[len(ms)-1]
	return p
}

// rank is the nearest-rank q-th percentile of the sorted, non-empty sorted.
func rank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
