package mutantrun

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/storecheck/storecheck/scenarios"
)

// TestProbeConcurrent is a tuning aid, not part of CI: it runs the
// concurrent scenario against the mutants only it catches over
// STORECHECK_PROBE seeds.
func TestProbeConcurrent(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STORECHECK_PROBE"))
	if n == 0 {
		t.Skip("set STORECHECK_PROBE=N to probe N seeds")
	}
	subjects, err := Select(Subjects(), []string{"split-commit", "read-check-write", "stale-read", "sqlite", "guarded-upsert"})
	if err != nil {
		t.Fatal(err)
	}
	z := DefaultSizing()
	if v, _ := strconv.Atoi(os.Getenv("STORECHECK_PROBE_OPS")); v > 0 {
		z.Ops = v
	}
	if v, _ := strconv.Atoi(os.Getenv("STORECHECK_PROBE_EXECS")); v > 0 {
		z.Executions = v
	}
	if v, _ := strconv.Atoi(os.Getenv("STORECHECK_PROBE_CLIENTS")); v > 0 {
		z.Clients = v
	}
	for seed := 1; seed <= n; seed++ {
		tab, _, err := Runner{Subjects: subjects, Scenarios: []scenarios.Scenario{concurrentScenario()}, Seed: uint64(seed), Sizing: z}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("seed %d:", seed)
		for _, row := range tab.Rows {
			r := row.Runs[0]
			line += fmt.Sprintf(" %s=%s/%s/%dms", row.Name, r.Verdict, r.Guarantee, r.Time.Milliseconds())
		}
		t.Log(line)
	}
}
