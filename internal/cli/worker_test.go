package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/worker"

	"github.com/storecheck/storecheck/procfault"
	"github.com/storecheck/storecheck/reports"
)

// The worker command is hidden from help, and refuses to run by hand.
func TestWorkerCommandIsHidden(t *testing.T) {
	_, stdout, _ := run(t, "help")
	if strings.Contains(stdout, worker.Arg) {
		t.Errorf("help lists the hidden worker command:\n%s", stdout)
	}
	code, _, stderr := run(t, worker.Arg)
	if code != ExitUsage || !strings.Contains(stderr, "not by hand") {
		t.Errorf("by hand: want exit 2 and a usage line, got %d: %s", code, stderr)
	}
}

// storecheck run with the fault scenarios on a SQLite file, end to end: the
// workers are this test binary running the worker command through Main.
func TestRunFaultScenarios(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := run(t, "run", "--backend", "sqlite:"+filepath.Join(dir, "c.db"),
		"--scenario", "crash-recovery,writer-stall", "--seed", "1", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Runs) != 2 {
		t.Fatalf("want 2 runs, got %+v", sum.Runs)
	}
	for _, r := range sum.Runs {
		if r.Verdict != reports.Pass {
			t.Errorf("%s: %s: %s", r.Scenario, r.Verdict, r.Reason)
		}
	}
	if m := sum.Runs[0].Metrics; sum.Runs[0].Scenario != "crash-recovery" || m["cycles"] != procfault.DefaultCycles || m["crashes_mid_commit"] == 0 {
		t.Errorf("crash-recovery metrics: %v", m)
	}
	if m := sum.Runs[1].Metrics; m["busy_during_stall"] == 0 {
		t.Errorf("writer-stall metrics: %v", m)
	}
}
