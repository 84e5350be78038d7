package linearizability

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/internal/procgc"
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

// BenchmarkCheckMillion is the checker at the scale of a long soak: a
// legal simulated history of 1,000,000 workload operations over 1,000
// executions (20 clients, 1% indeterminate writes), written to a JSONL file
// as a run writes it, then read back and checked, as `storecheck check`
// does. It reports the check's time (reading included) and the heap the
// process reached. Simulating the history takes longer than checking it;
// the matrix benchmark above does not include this case. With
// STORECHECK_MILLION_HISTORY naming a file, the history is simulated into
// it once and read from it after, so that before/after binaries can
// alternate on the same file without simulating it each time. The check
// runs with the garbage collector storecheck check sets
// (procgc.ForCheck), unless GOGC is set.
//
//	go test -run '^$' -bench CheckMillion -benchtime 1x ./linearizability/
func BenchmarkCheckMillion(b *testing.B) {
	path := os.Getenv("STORECHECK_MILLION_HISTORY")
	if path == "" {
		path = filepath.Join(b.TempDir(), "history.jsonl")
	}
	if _, err := os.Stat(path); err != nil {
		writeMillion(b, path)
	}
	b.Cleanup(procgc.ForCheck())
	runtime.GC()
	debug.FreeOSMemory()
	peak := sampleHeld(b)
	var ops int
	for b.Loop() {
		start := time.Now()
		h, err := LoadFile(path)
		read := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		ops = len(h.Ops)
		rep, err := Check(context.Background(), h, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Verdict != Ok {
			b.Fatalf("legal history checked %s: %v", rep.Verdict, rep.Err)
		}
		b.ReportMetric(float64(read.Milliseconds()), "read-ms")
		b.ReportMetric(float64(rep.GlobalTime.Milliseconds()), "global-ms")
		b.ReportMetric(float64(rep.LinearizationTime.Milliseconds()), "porcupine-ms")
	}
	b.ReportMetric(float64(ops), "history-ops")
	b.ReportMetric(float64(peak())/(1<<20), "peak-held-MiB")
}

// sampleHeld samples, every 50 ms until the returned function is called,
// the heap memory the process holds from the system (HeapSys less what it
// released), and returns the largest sample.
func sampleHeld(b *testing.B) func() uint64 {
	var mu sync.Mutex
	var most uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		mu.Lock()
		most = max(most, m.HeapSys-m.HeapReleased)
		mu.Unlock()
	}
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	b.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	})
	return func() uint64 {
		close(stop)
		<-done
		sample()
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}

// writeMillion simulates BenchmarkCheckMillion's history into path (whole,
// or not at all).
func writeMillion(b *testing.B, path string) {
	h := simulate(b, simConfig{ops: 1_000_000, clients: 20, execs: 1000, traceMax: model.DefaultTraceMax, seed: 1, indeterminate: 0.01})
	f, err := os.Create(path + ".partial")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(path + ".partial") // gone once renamed; never left half-written
	defer f.Close()
	w := bufio.NewWriter(f)
	if err := WriteJSONL(w, h); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".partial", path); err != nil {
		b.Fatal(err)
	}
}
