package reports

import (
	"math"
	"testing"
	"time"

	"github.com/storecheck/storecheck/linearizability"
)

// op is an operation of kind from call to ret (ms) with an outcome.
func op(kind linearizability.Kind, callMS, retMS float64, outcome linearizability.Outcome) linearizability.Operation {
	o := linearizability.Operation{
		Kind: kind, Execution: "e1",
		Call: int64(callMS * 1e6), Return: int64(retMS * 1e6),
		Output: linearizability.Output{Outcome: outcome},
	}
	if outcome == linearizability.OutcomeIndeterminate {
		o.Output.Observed, o.Return = o.Return, linearizability.EndOfHistory
	}
	return o
}

func TestMeasure(t *testing.T) {
	const (
		ok            = linearizability.OutcomeOK
		conflict      = linearizability.OutcomeConflict
		indeterminate = linearizability.OutcomeIndeterminate
		failed        = linearizability.OutcomeFailed
	)
	ops := []linearizability.Operation{
		op(linearizability.KindLoad, 0, 1, ok),
		op(linearizability.KindLoad, 1, 3, ok),
		op(linearizability.KindLoad, 2, 5, failed),
		op(linearizability.KindCommit, 10, 14, ok),
		op(linearizability.KindCommit, 20, 25, conflict),
		op(linearizability.KindSave, 30, 36, ok),
		op(linearizability.KindCommit, 40, 1000, indeterminate), // observed at 1000 ms: ends the traffic
	}
	heal := op(linearizability.KindLoad, 2000, 5000, ok)
	heal.Heal = true
	m := Measure(linearizability.History{Ops: append(ops, heal)})

	if m.Ops != 7 || m.HealOps != 1 {
		t.Errorf("ops %d heal %d, want 7 and 1", m.Ops, m.HealOps)
	}
	if m.Commits != 4 || m.Conflicts != 1 || m.Indeterminate != 1 || m.Failed != 1 {
		t.Errorf("commits %d conflicts %d indeterminate %d failed %d, want 4 1 1 1", m.Commits, m.Conflicts, m.Indeterminate, m.Failed)
	}
	if m.ConflictRate != 0.25 {
		t.Errorf("conflict rate %v, want 0.25", m.ConflictRate)
	}
	if m.Start != 0 || m.Span != time.Second {
		t.Errorf("span %v from %d, want 1s from 0 (heal reads excluded, indeterminate ends when observed)", m.Span, m.Start)
	}
	if m.Throughput != 7 {
		t.Errorf("throughput %v, want 7 ops/s", m.Throughput)
	}
	wantLatency := map[string]Percentiles{
		"load":    {Count: 3, Timed: 3, P50: 2, P95: 3, P99: 3, Max: 3},
		"commit":  {Count: 3, Timed: 2, P50: 4, P95: 5, P99: 5, Max: 5},
		"save":    {Count: 1, Timed: 1, P50: 6, P95: 6, P99: 6, Max: 6},
		AllKinds:  {Count: 7, Timed: 6, P50: 3, P95: 6, P99: 6, Max: 6},
		"missing": {},
	}
	for k, want := range wantLatency {
		if got := m.Latency[k]; !near(got, want) {
			t.Errorf("latency[%s] = %+v, want %+v", k, got, want)
		}
	}

	var sum, conflicts, errs int
	for _, b := range m.Series {
		sum, conflicts, errs = sum+b.Ops, conflicts+b.Conflicts, errs+b.Errors
	}
	if sum != 7 || conflicts != 1 || errs != 2 {
		t.Errorf("series holds %d ops, %d conflicts, %d errors; want 7, 1, 2", sum, conflicts, errs)
	}
	if n := len(m.Series); n != minBuckets {
		t.Errorf("%d buckets, want %d for 7 operations", n, minBuckets)
	}
	if last := m.Series[len(m.Series)-1]; last.Ops != 1 || last.Timed != 0 {
		t.Errorf("last bucket %+v, want the indeterminate commit only, untimed", last)
	}

	var r Run
	m.Fill(&r)
	if r.Throughput != 7 || r.Latency["commit"].Count != 3 || r.Metrics["conflict_rate"] != 0.25 {
		t.Errorf("Fill gave %+v", r)
	}
}

func near(a, b Percentiles) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Count == b.Count && a.Timed == b.Timed && eq(a.P50, b.P50) && eq(a.P95, b.P95) && eq(a.P99, b.P99) && eq(a.Max, b.Max)
}

func TestMeasureEmpty(t *testing.T) {
	m := Measure(linearizability.History{})
	if m.Ops != 0 || m.Throughput != 0 || len(m.Series) != 0 {
		t.Errorf("empty history measured %+v", m)
	}
	var r Run
	m.Fill(&r)
	if r.Latency != nil || r.Metrics != nil {
		t.Errorf("Fill of an empty measurement changed the run: %+v", r)
	}
}

func TestPercentilesNearestRank(t *testing.T) {
	ms := make([]float64, 100)
	for i := range ms {
		ms[i] = float64(100 - i) // 100 … 1, unsorted
	}
	p := percentiles(100, ms)
	if p.P50 != 50 || p.P95 != 95 || p.P99 != 99 || p.Max != 100 {
		t.Errorf("percentiles of 1..100 = %+v", p)
	}
}

func TestBucketWidth(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		ops  int
		want time.Duration
		why  string
	}{
		{0, 1000, time.Millisecond, "never shorter than 1ms"},
		{50 * time.Millisecond, 10000, time.Millisecond, "never shorter than 1ms"},
		{300 * time.Millisecond, 3000, 5 * time.Millisecond, "120 buckets of 2.5ms, rounded up"},
		{2 * time.Second, 300, 200 * time.Millisecond, "few operations: 15 buckets"},
		{2 * time.Second, 7, 200 * time.Millisecond, "at least 10 buckets"},
		{time.Minute, 100000, 500 * time.Millisecond, "120 buckets"},
		{time.Hour, 1 << 20, 50 * time.Second, "120 buckets"},
	} {
		if got := BucketWidth(tc.span, tc.ops); got != tc.want {
			t.Errorf("BucketWidth(%v, %d) = %v, want %v (%s)", tc.span, tc.ops, got, tc.want, tc.why)
		}
	}
}

func TestSeriesBounded(t *testing.T) {
	// One operation an hour in: the series still has at most maxBuckets.
	ops := []linearizability.Operation{
		op(linearizability.KindLoad, 0, 1, linearizability.OutcomeOK),
		op(linearizability.KindLoad, 3.6e6, 3.6e6+1, linearizability.OutcomeOK),
	}
	m := Measure(linearizability.History{Ops: ops})
	if n := len(m.Series); n == 0 || n > maxBuckets {
		t.Fatalf("%d buckets", n)
	}
	if m.Series[0].Ops != 1 || m.Series[len(m.Series)-1].Ops != 1 {
		t.Errorf("first and last buckets %+v %+v, want one op each", m.Series[0], m.Series[len(m.Series)-1])
	}
}
