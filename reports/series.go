package reports

import (
	"math"
	"time"

	"github.com/storecheck/storecheck/linearizability"
)

// Series bounds: a plot gets about targetBuckets points whatever the run's
// length, fewer for a short history (about opsPerBucket operations each, at
// least minBuckets), never more than maxBuckets; and a bucket is never
// shorter than minBucket.
const (
	targetBuckets = 120
	minBuckets    = 10
	maxBuckets    = 200
	opsPerBucket  = 40
	minBucket     = time.Millisecond
)

// Bucket is one slice of the traffic over time. Operations are counted in
// the bucket in which they ended.
type Bucket struct {
	// Start is the bucket's start in the history's nanoseconds; Width its
	// length.
	Start int64
	Width time.Duration
	// Ops ended in the bucket; Errors of them failed or were indeterminate;
	// Timed had a latency.
	Ops, Errors, Timed int
	// Commits and Conflicts are commit and save attempts and lost CAS.
	Commits, Conflicts int
	// P50 and P99 are the latencies of the bucket's timed operations, in
	// milliseconds; 0 when Timed is 0.
	P50, P99 float64
}

// Throughput is the bucket's completed operations per second.
func (b Bucket) Throughput() float64 {
	if b.Width <= 0 {
		return 0
	}
	return float64(b.Ops) / b.Width.Seconds()
}

// ConflictRate is Conflicts / Commits, and false without commits.
func (b Bucket) ConflictRate() (float64, bool) {
	if b.Commits == 0 {
		return 0, false
	}
	return float64(b.Conflicts) / float64(b.Commits), true
}

// Mid is the bucket's middle in seconds of the history's clock, the x of a
// plot.
func (b Bucket) Mid() float64 {
	return (float64(b.Start) + float64(b.Width)/2) / 1e9
}

// BucketWidth is the width Measure uses for ops operations over a traffic
// span: a round number (1, 2 or 5 × 10ⁿ ms) giving about targetBuckets
// buckets, fewer for few operations.
func BucketWidth(span time.Duration, ops int) time.Duration {
	n := min(max(ops/opsPerBucket, minBuckets), targetBuckets)
	want := max(span/time.Duration(n), minBucket)
	for w := minBucket; w < math.MaxInt64/10; w *= 10 {
		for _, f := range []time.Duration{1, 2, 5} {
			if w*f >= want {
				return w * f
			}
		}
	}
	return want
}

// series buckets ops, whose traffic runs from start to end.
func series(ops []linearizability.Operation, start, end int64) []Bucket {
	width := BucketWidth(time.Duration(end-start), len(ops))
	n := min(max(int((end-start)/int64(width)), 1), maxBuckets)
	buckets := make([]Bucket, n)
	lat := make([][]float64, n)
	for i := range buckets {
		buckets[i] = Bucket{Start: start + int64(i)*int64(width), Width: width}
	}
	if last := &buckets[n-1]; end-last.Start > int64(width) {
		// The last bucket takes the remainder of the span (less than one
		// width more), so that its rate is not read off a sliver.
		last.Width = time.Duration(end - last.Start)
	}
	for _, op := range ops {
		i := min(max(int((endTime(op)-start)/int64(width)), 0), n-1)
		b := &buckets[i]
		b.Ops++
		if op.Kind.IsCommit() {
			b.Commits++
		}
		switch op.Output.Outcome {
		case linearizability.OutcomeConflict:
			b.Conflicts++
		case linearizability.OutcomeIndeterminate:
			b.Errors++
			continue
		case linearizability.OutcomeFailed:
			b.Errors++
		}
		lat[i] = append(lat[i], latencyMS(op))
	}
	for i := range buckets {
		p := percentiles(len(lat[i]), lat[i])
		buckets[i].Timed, buckets[i].P50, buckets[i].P99 = p.Timed, p.P50, p.P99
	}
	return buckets
}
