package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/workload"
)

// faultContext says which faults were in place at atNS (from the start of
// the run), so that a violation is not blamed on a fault that had not yet
// begun: "while partition n2 was active (since 3.20s)", or "with no fault
// active (the first began at 4.10s)". It is "" when atNS is unknown.
func faultContext(atNS int64, faults []evidence.Fault) string {
	if atNS <= 0 {
		return ""
	}
	var active []string
	first := int64(-1)
	for _, f := range faults {
		if first < 0 || f.StartNS < first {
			first = f.StartNS
		}
		if f.StartNS <= atNS && (f.EndNS == 0 || atNS < f.EndNS) {
			active = append(active, fmt.Sprintf("%s was active (since %s)", strings.TrimSpace(f.Fault+" "+f.Target), seconds(f.StartNS)))
		}
	}
	switch {
	case len(active) > 0:
		return "while " + strings.Join(active, " and ")
	case first < 0:
		return "with no fault injected"
	case atNS < first:
		return fmt.Sprintf("with no fault active yet (the first began at %s)", seconds(first))
	}
	return "with no fault active (all healed)"
}

// firstViolationAt is when the first violation's operation was called, or
// 0 when the checker did not place it.
func firstViolationAt(res *workload.Result) int64 {
	if res.Report == nil || len(res.Report.Violations) == 0 {
		return 0
	}
	return res.Report.Violations[0].AtNS
}

func seconds(ns int64) string { return fmt.Sprintf("%.2fs", time.Duration(ns).Seconds()) }
