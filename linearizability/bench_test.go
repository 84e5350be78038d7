package linearizability

import (
	"context"
	"fmt"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// BenchmarkCheck checks legal simulated histories of 1k, 10k and 100k
// operations across 100 executions (20 clients with overlapping intervals,
// 1% of writes indeterminate, the default trace cap), porcupine and global
// checks together. Run: go test -run xxx -bench BenchmarkCheck -benchtime 1x
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			h := simulate(b, simConfig{ops: n, clients: 20, execs: 100, traceMax: model.DefaultTraceMax, seed: 1, indeterminate: 0.01})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				rep, err := Check(context.Background(), h, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Verdict != Ok {
					b.Fatalf("legal history checked %s: %v", rep.Verdict, rep.Err)
				}
				b.ReportMetric(float64(len(h.Ops)), "history-ops")
			}
		})
	}
}
