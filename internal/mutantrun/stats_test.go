package mutantrun

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/reports"
)

// TestDetectionStatistics measures, per mutant over STORECHECK_MUTANT_STATS
// seeds, how often it is caught and the median and worst time, operations
// and minimal sequence length until it is, with the real scenarios. It is a
// measurement, not a CI test: several minutes per seed, mostly the
// conformance scenario's minimisation.
func TestDetectionStatistics(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STORECHECK_MUTANT_STATS"))
	if n == 0 {
		t.Skip("set STORECHECK_MUTANT_STATS=N to measure over N seeds")
	}
	first := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("STORECHECK_MUTANT_STATS_FIRST"), 10, 64); err == nil && v > 0 {
		first = v
	}
	var tables []*Table
	for seed := first; seed < first+uint64(n); seed++ {
		tab, _, err := Runner{Seed: seed}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tab)
		t.Logf("seed %d: pass=%v survivors=%v flagged=%v", seed, tab.Pass(), tab.Survivors(), tab.Flagged())
	}
	for _, line := range statistics(tables) {
		t.Log(line)
	}
}

// statistics summarises the rows of several tables, one line per subject.
func statistics(tables []*Table) []string {
	lines := []string{"NAME | caught | by | time median/worst | ops median/worst | minimal median/worst | conformance time, concurrent time (median)"}
	for _, row := range tables[0].Rows {
		var caught int
		var times []time.Duration
		var ops, minimal []int64
		by := map[string]int{}
		perScenario := map[string][]time.Duration{}
		for _, tab := range tables {
			r, _ := tab.Row(row.Name)
			for _, run := range r.Runs {
				if run.Verdict == reports.Fail {
					perScenario[run.Scenario] = append(perScenario[run.Scenario], run.TimeToCatch)
				}
				if n := run.MinimalLength(); n > 0 && run.Verdict == reports.Fail {
					minimal = append(minimal, int64(n))
				}
			}
			if r.By == nil {
				continue
			}
			caught++
			by[r.By.Scenario+"/"+r.By.Guarantee]++
			times = append(times, r.By.TimeToCatch)
			ops = append(ops, r.By.OpsToCatch)
		}
		var bys []string
		for k, v := range by {
			bys = append(bys, fmt.Sprintf("%s×%d", k, v))
		}
		slices.Sort(bys)
		var scs []string
		for _, sc := range tables[0].Scenarios {
			scs = append(scs, fmt.Sprintf("%s %d× %v", sc, len(perScenario[sc]), median(perScenario[sc])))
		}
		lines = append(lines, fmt.Sprintf("%s | %d/%d | %s | %v/%v | %d/%d | %d/%d | %s", row.Name, caught, len(tables), strings.Join(bys, " "),
			median(times), worst(times), median(ops), worst(ops), median(minimal), worst(minimal), strings.Join(scs, ", ")))
	}
	return lines
}

func median[T int64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func worst[T int64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}
