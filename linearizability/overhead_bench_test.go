package linearizability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
//
// STORECHECK_RECORDER_CONTROL puts a control in the recorder's place, to
// calibrate the ratio: "none" runs the store raw in both phases (an A/A
// run: how far the ratio strays with nothing between), and a duration such
// as "800ns" has each client burn that much CPU before every load and
// commit (what a given cost per operation does to the ratio).
func BenchmarkRecorderOverhead(b *testing.B) {
	second, err := recorderControl(os.Getenv("STORECHECK_RECORDER_CONTROL"))
	if err != nil {
		b.Fatal(err)
	}
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
							client := second(store)
							cpu := processCPU()
							recorded += loadCommitLoop(b, clients, fmt.Sprintf("rec%d", round), client)
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

// recorderControl returns what the second phase's clients are made from
// when it is not the recorder (see BenchmarkRecorderOverhead).
func recorderControl(control string) (func(model.Store) func(int) storeLike, error) {
	switch control {
	case "":
		return func(store model.Store) func(int) storeLike {
			rec := NewRecorder(store)
			return func(int) storeLike { return rec.Client() }
		}, nil
	case "none":
		return func(store model.Store) func(int) storeLike {
			return func(int) storeLike { return store }
		}, nil
	}
	d, err := time.ParseDuration(control)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("STORECHECK_RECORDER_CONTROL=%q: want none or a positive duration such as 800ns", control)
	}
	return func(store model.Store) func(int) storeLike {
		return func(int) storeLike { return spinningStore{store: store, spin: d} }
	}, nil
}

// spinningStore is the store behind a client that burns spin of CPU before
// every load and commit.
type spinningStore struct {
	store model.Store
	spin  time.Duration
}

func (s spinningStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	burn(s.spin)
	return s.store.Load(ctx, id)
}

func (s spinningStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	burn(s.spin)
	return s.store.Commit(ctx, exe, b)
}

// burn keeps the goroutine busy for d of wall time, preemptible and with
// no sleep: CPU spent, as the recorder spends it.
func burn(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
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
				// Witness fields in Extra, as the workloads write them.
				prev := exe.Extra[TokenField]
				if prev == nil {
					prev = json.RawMessage(`""`)
				}
				exe.Context = json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))
				exe.Extra = map[string]json.RawMessage{
					TokenField: json.RawMessage(fmt.Sprintf(`"%s-%d"`, id, n)), PrevField: prev,
				}
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
		Context: json.RawMessage(`{"n":1}`), Extra: map[string]json.RawMessage{
			TokenField: json.RawMessage(`"e-7"`), PrevField: json.RawMessage(`"e-6"`),
		}}
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
