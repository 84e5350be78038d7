package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/internal/cli"
)

// TestReplicaLagAcceptance is issue 7's acceptance command, in-process:
// storecheck run --backend 'lagsim:P?lag=200ms' --scenario
// replica-lag-conflict --seed 3 passes, loses no update, and conflicts grow
// with lag.
func TestReplicaLagAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("the full sweep takes about fifteen seconds")
	}
	out := t.TempDir()
	backend := "lagsim:" + filepath.Join(t.TempDir(), "p.db") + "?lag=200ms"
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"run", "--backend", backend, "--scenario", "replica-lag-conflict", "--seed", "3", "--out", out}, &stdout, &stderr)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Runs []struct {
			Verdict string             `json:"verdict"`
			Reason  string             `json:"reason"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Runs) != 1 {
		t.Fatalf("summary: %v, %d runs", err, len(sum.Runs))
	}
	r := sum.Runs[0]
	t.Log(r.Reason)
	m := r.Metrics
	if r.Verdict != "PASS" || m["lost_updates"] != 0 || m["faults_lost_updates"] != 0 {
		t.Fatalf("verdict %s, lost updates %v: %s", r.Verdict, m["lost_updates"], r.Reason)
	}
	// Spurious conflicts — a CAS lost because the replica it was decided
	// from lagged — are what lag causes; the total rate also moves with how
	// much the clients overlap, which a loaded machine changes, so only the
	// spurious rate is asserted to grow.
	if !(m["lag_200ms_spurious_rate"] > m["lag_0ms_spurious_rate"]) || m["lag_200ms_spurious_rate"] <= 0 {
		t.Errorf("spurious conflicts did not grow with lag: 0ms %.3f, 200ms %.3f (total rates %.3f, %.3f)",
			m["lag_0ms_spurious_rate"], m["lag_200ms_spurious_rate"], m["lag_0ms_conflict_rate"], m["lag_200ms_conflict_rate"])
	}
}
