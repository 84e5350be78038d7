package linearizability

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// BenchmarkCheckScale checks legal simulated histories across the matrix the
// performance goals name: 1k, 10k and 100k operations over 10, 100 and 1000
// executions (20 clients, 1% indeterminate writes). It reports the history
// size, bytes per recorded operation in the history, and the peak heap the
// check reached (sampled after it, from runtime.MemStats.HeapSys growth).
//
//	go test -run '^$' -bench CheckScale -benchtime 1x ./linearizability/
func BenchmarkCheckScale(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, execs := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("ops=%d/executions=%d", n, execs), func(b *testing.B) {
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				h := simulate(b, simConfig{ops: n, clients: 20, execs: execs, traceMax: model.DefaultTraceMax, seed: 1, indeterminate: 0.01})
				var afterSim runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&afterSim)
				b.ReportAllocs()
				b.ResetTimer()
				var global, porcupine time.Duration
				runs := 0
				for b.Loop() {
					rep, err := Check(context.Background(), h, Options{})
					if err != nil {
						b.Fatal(err)
					}
					if rep.Verdict != Ok {
						b.Fatalf("legal history checked %s: %v", rep.Verdict, rep.Err)
					}
					global += rep.GlobalTime
					porcupine += rep.LinearizationTime
					runs++
				}
				b.StopTimer()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(len(h.Ops)), "history-ops")
				b.ReportMetric(float64(global.Milliseconds())/float64(runs), "global-ms")
				b.ReportMetric(float64(porcupine.Milliseconds())/float64(runs), "porcupine-ms")
				b.ReportMetric(float64(afterSim.HeapAlloc-min(before.HeapAlloc, afterSim.HeapAlloc))/float64(len(h.Ops)), "B/history-op")
				b.ReportMetric(float64(after.HeapSys)/(1<<20), "heap-sys-MiB")
			})
		}
	}
}
