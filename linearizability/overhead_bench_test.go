package linearizability

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/model"
)

// opsPerClientPerRound is the work each client does per benchmark round, once
// straight against the store and once through the recorder.
const opsPerClientPerRound = 100

// BenchmarkRecorderOverhead measures each backend's raw throughput of a
// load-then-commit loop, single client and 8 clients, and the same loop
// through the history recorder, in the same run; it reports both and their
// ratio (recorded ÷ raw; 1.0 means the recorder costs nothing), and the
// process's CPU per operation in each phase as a ratio too (raw ÷
// recorded), which moves far less from run to run.
//
//	go test -run '^$' -bench RecorderOverhead ./linearizability/
func BenchmarkRecorderOverhead(b *testing.B) {
	for _, backend := range []string{"memory", "sqlite", "libsql", "rqlite"} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", backend, clients), func(b *testing.B) {
				var url string
				switch backend {
				case "memory":
					url = "memory:"
				case "rqlite":
					// A 3-node cluster on loopback, when $RQLITED or PATH has
					// rqlited; otherwise NOT RUN.
					url = "rqlite+process:?nodes=3"
				default:
					url = backend + ":" + filepath.Join(b.TempDir(), "bench.db")
				}
				store, err := backends.Open(context.Background(), url, model.DefaultConfig())
				if err != nil {
					b.Skipf("NOT RUN: %v", err)
				}
				b.Cleanup(func() { store.Close() })
				var raw, recorded time.Duration
				var rawCPU, recCPU time.Duration
				var rawOps, recOps int
				round := 0
				for b.Loop() {
					round++
					// Alternate which goes first, so that a database growing
					// through the run favours neither.
					phases := []func(){
						func() {
							cpu := processCPU()
							raw += loadCommitLoop(b, clients, fmt.Sprintf("raw%d", round), func(int) storeLike { return store })
							rawCPU += processCPU() - cpu
							rawOps += clients * opsPerClientPerRound * 2
						},
						func() {
							rec := NewRecorder(store)
							cpu := processCPU()
							recorded += loadCommitLoop(b, clients, fmt.Sprintf("rec%d", round), func(int) storeLike { return rec.Client() })
							recCPU += processCPU() - cpu
							recOps += clients * opsPerClientPerRound * 2
						},
					}
					phases[round%2]()
					phases[(round+1)%2]()
				}
				rawRate := float64(rawOps) / raw.Seconds()
				recRate := float64(recOps) / recorded.Seconds()
				b.ReportMetric(rawRate, "raw-ops/s")
				b.ReportMetric(recRate, "recorded-ops/s")
				// CPU per operation of the whole process (a cgo store's
				// threads too): steadier than the throughputs, whose phases
				// end with their slowest client and SQLite's busy sleeps.
				rawPer := rawCPU.Seconds() / float64(rawOps)
				recPer := recCPU.Seconds() / float64(recOps)
				b.ReportMetric(rawPer/recPer, "cpu-raw/recorded")
				b.ReportMetric(recRate/rawRate, "recorded/raw")
			})
		}
	}
}

// storeLike is what both a store and a recorder client offer the loop.
type storeLike interface {
	Load(ctx context.Context, id string) (*model.Execution, error)
	Commit(ctx context.Context, exe *model.Execution, b model.Batch) error
}

// loadCommitLoop runs clients goroutines, each loading its own execution and
// committing it from the version loaded, and returns the wall time taken.
func loadCommitLoop(b *testing.B, clients int, prefix string, client func(int) storeLike) time.Duration {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, clients)
	start := time.Now()
	for i := range clients {
		s := client(i)
		wg.Go(func() {
			id := fmt.Sprintf("%s-e%d", prefix, i)
			for n := range opsPerClientPerRound {
				exe, err := s.Load(ctx, id)
				if err != nil {
					errs[i] = err
					return
				}
				if exe == nil {
					exe = &model.Execution{ID: id, DefinitionID: "bench", Status: "running"}
				}
				exe.Context = json.RawMessage(fmt.Sprintf(`{"token":"%s-%d"}`, id, n))
				if err := s.Commit(ctx, exe, model.Batch{}); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// BenchmarkRecorderCost is the recorder's own CPU per operation: the
// load-then-commit loop of one client over a store that answers at once
// (the reference model would be most of the time), so that ns/op is what
// recording a load and a commit costs. BenchmarkRecorderOverhead says what
// that costs against real stores; this one is steady enough to compare two
// recorders by.
func BenchmarkRecorderCost(b *testing.B) {
	exe := &model.Execution{ID: "e", DefinitionID: "bench", Status: "running", Version: 7,
		Context: json.RawMessage(`{"n":1,"token":"e-7"}`)}
	ctx := context.Background()
	var c *Client
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%4096 == 0 { // a history of bounded length, as a run's
			c = NewRecorder(instantStore{exe: exe}).Client()
		}
		got, err := c.Load(ctx, "e")
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Commit(ctx, got, model.Batch{}); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// instantStore answers every load with one execution (a copy, as a store
// decodes a fresh one) and every commit with success.
type instantStore struct {
	model.Store
	exe *model.Execution
}

func (s instantStore) Load(context.Context, string) (*model.Execution, error) {
	e := *s.exe
	return &e, nil
}

func (s instantStore) Commit(context.Context, *model.Execution, model.Batch) error { return nil }
