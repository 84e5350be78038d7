package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The figures of a run, from the summary when it has them, else measured
// from the run's history.

// throughput is the run's traffic operations per second.
func (v *runView) throughput() (float64, bool) {
	switch {
	case v.Throughput > 0:
		return v.Throughput, true
	case v.Measured != nil && v.Measured.Throughput > 0:
		return v.Measured.Throughput, true
	}
	if ops, ok := v.Metrics["ops_per_sec"]; ok {
		return ops, true
	}
	return 0, false
}

// latency is the run's latency percentiles for a kind (or AllKinds).
func (v *runView) latency(kind string) (Percentiles, bool) {
	if p, ok := v.Latency[kind]; ok && p.Timed > 0 {
		return p, true
	}
	if v.Measured != nil {
		if p, ok := v.Measured.Latency[kind]; ok && p.Timed > 0 {
			return p, true
		}
	}
	return Percentiles{}, false
}

// conflictRate is the run's conflicts per commit attempt.
func (v *runView) conflictRate() (float64, bool) {
	if r, ok := v.Metrics["conflict_rate"]; ok {
		return r, true
	}
	if v.Measured != nil && v.Measured.Commits > 0 {
		return v.Measured.ConflictRate, true
	}
	return 0, false
}

// indeterminate is the number of operations with an unknown outcome.
func (v *runView) indeterminate() (int, bool) {
	if v.Measured != nil {
		return v.Measured.Indeterminate, true
	}
	if n, ok := v.Metrics["indeterminate"]; ok {
		return int(n), true
	}
	return 0, false
}

// Formatting. Each returns "—" for a figure the run does not have.

const none = "—"

func fmtRate(x float64, ok bool) string {
	if !ok {
		return none
	}
	return fmtThousands(int64(math.Round(x)))
}

func fmtMS(x float64, ok bool) string {
	switch {
	case !ok:
		return none
	case x < 1:
		return strconv.FormatFloat(x, 'f', 3, 64)
	case x < 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return fmtThousands(int64(math.Round(x)))
}

func fmtPct(x float64, ok bool) string {
	if !ok {
		return none
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
}

func fmtDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d <= 0:
		return none
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return d.Round(time.Second).String()
}

func fmtCount(n int64) string {
	if n <= 0 {
		return none
	}
	return fmtThousands(n)
}

// fmtThousands writes n with thin spaces between groups of three digits.
func fmtThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
