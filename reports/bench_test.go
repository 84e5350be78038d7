package reports

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
)

// synthHistory is a history of n operations by 8 clients over about ten
// seconds, slower and with indeterminate commits while a fault is on
// (between 4 and 6 s); the same for the same seed.
func synthHistory(n int, seed uint64) linearizability.History {
	rng := rand.New(rand.NewPCG(seed, 1))
	kinds := []linearizability.Kind{
		linearizability.KindCommit, linearizability.KindCommit, linearizability.KindSave,
		linearizability.KindLoad, linearizability.KindLoad, linearizability.KindLoadForEvent,
		linearizability.KindReadTrace, linearizability.KindPendingOutbox,
	}
	const clients = 8
	gap := int64(10e9) * clients / int64(n)
	var clock [clients]int64
	var id [clients]int // a client continues under a new id after an indeterminate write
	h := linearizability.History{Meta: linearizability.DefaultMeta()}
	for i := range n {
		c := i % clients
		call := clock[c]
		lat := int64(50_000 + rng.ExpFloat64()*150_000)
		faulty := call > 4e9 && call < 6e9
		if faulty {
			lat *= 15
		}
		op := linearizability.Operation{
			Client: c + clients*id[c], Kind: kinds[rng.IntN(len(kinds))], Execution: fmt.Sprintf("e%d", rng.IntN(4)),
			Call: call, Return: call + lat, Output: linearizability.Output{Outcome: linearizability.OutcomeOK},
		}
		if op.Kind.IsCommit() {
			switch r := rng.Float64(); {
			case r < 0.25:
				op.Output.Outcome = linearizability.OutcomeConflict
			case faulty && r < 0.4:
				op.Output.Outcome, op.Output.Observed, op.Return = linearizability.OutcomeIndeterminate, op.Return, linearizability.EndOfHistory
				id[c]++
			}
		}
		h.Ops = append(h.Ops, op)
		clock[c] = call + lat + rng.Int64N(gap)
	}
	return h
}

// benchFolder writes a report folder with one concurrent run of an n-op
// history and a fault log.
func benchFolder(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	run := filepath.Join(dir, "runs", "01-memory-concurrent")
	if err := os.MkdirAll(run, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := linearizability.SaveFile(filepath.Join(run, evidence.HistoryFile), synthHistory(n, 1)); err != nil {
		b.Fatal(err)
	}
	faults := `{"fault":"kill-leader","target":"n1","start_ns":4000000000,"end_ns":6000000000}` + "\n"
	if err := os.WriteFile(filepath.Join(run, evidence.FaultsFile), []byte(faults), 0o644); err != nil {
		b.Fatal(err)
	}
	sum := Summary{Seed: 1, Command: "storecheck run --seed 1", Runs: []Run{
		{Backend: "memory:", Scenario: "concurrent", Verdict: Pass, Seed: 1, Ops: int64(n), DurationMS: 10_000, Dir: "runs/01-memory-concurrent"},
		{Backend: "memory:", Scenario: "conformance", Verdict: Fail, Seed: 1, Reason: "step 3 diverged", MinimalSteps: []string{"commit", "load"}},
	}}
	if err := WriteJSON(filepath.Join(dir, SummaryFile), sum); err != nil {
		b.Fatal(err)
	}
	return dir
}

func BenchmarkRender10k(b *testing.B) {
	dir := benchFolder(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if err := Render(dir); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(filepath.Join(dir, HTMLFile))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Size())/1024, "KiB-html")
}

func BenchmarkMeasure10k(b *testing.B) {
	h := synthHistory(10_000, 1)
	b.ReportAllocs()
	for b.Loop() {
		Measure(h)
	}
}

func TestSynthHistoryIsValid(t *testing.T) {
	// The benchmark's history must read back as a history.
	path := filepath.Join(t.TempDir(), evidence.HistoryFile)
	if err := linearizability.SaveFile(path, synthHistory(2000, 7)); err != nil {
		t.Fatal(err)
	}
	h, err := linearizability.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := Measure(h)
	if m.Ops != 2000 || m.Indeterminate == 0 || m.Conflicts == 0 || len(m.Series) < minBuckets {
		t.Errorf("measured %d ops, %d indeterminate, %d conflicts, %d buckets", m.Ops, m.Indeterminate, m.Conflicts, len(m.Series))
	}
}
