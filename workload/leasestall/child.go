package leasestall

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runs"
)

// WorkerEnv is the environment variable that makes a process started by
// RunProcesses a lease-stall worker (see MaybeWorker).
const WorkerEnv = "STORECHECK_LEASESTALL_WORKER"

// OpenFunc opens the run store a URL names.
type OpenFunc func(ctx context.Context, url string) (runs.Store, error)

// MaybeWorker turns the process into a lease-stall worker if it was
// started as one (WorkerEnv=1), and then exits; otherwise it returns at
// once. Binaries that run the lease-stall scenario call it first thing in
// main, test binaries in TestMain:
//
//	func main() {
//		leasestall.MaybeWorker(backends.OpenRuns)
//		…
//	}
func MaybeWorker(open OpenFunc) {
	if os.Getenv(WorkerEnv) != "1" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := workerMain(ctx, open, os.Stdin, os.Stdout)
	stop()
	os.Exit(code)
}

// childConfig is the one line a worker process reads on stdin.
type childConfig struct {
	URL         string        `json:"url"`
	Worker      string        `json:"worker"`
	Seed        uint64        `json:"seed"`
	Stream      uint64        `json:"stream"`
	Lease       time.Duration `json:"lease"`
	FirstClient int           `json:"first_client"`
	MaxOps      int           `json:"max_ops"`
}

// childLine is one line a worker process writes on stdout: first ready,
// then one per operation, or an error.
type childLine struct {
	Ready bool       `json:"ready,omitempty"`
	Op    *leases.Op `json:"op,omitempty"`
	Error string     `json:"error,omitempty"`
}

// workerMain reads the configuration, opens the store, says it is ready,
// and works until stdin closes (the parent's stop), writing every
// operation as it completes.
func workerMain(ctx context.Context, open OpenFunc, stdin io.Reader, stdout io.Writer) int {
	out := &lineWriter{w: bufio.NewWriter(stdout)}
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		out.write(childLine{Error: fmt.Sprintf("read configuration: %v", err)})
		return 2
	}
	var cfg childConfig
	if err := json.Unmarshal(line, &cfg); err != nil {
		out.write(childLine{Error: fmt.Sprintf("parse configuration: %v", err)})
		return 2
	}
	store, err := open(ctx, cfg.URL)
	if err != nil {
		out.write(childLine{Error: fmt.Sprintf("open %s: %v", cfg.URL, err)})
		return 1
	}
	defer store.Close()
	var stopped atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, in) // returns when the parent closes stdin
		stopped.Store(true)
	}()
	rec := leases.NewWallRecorder(store, cfg.FirstClient)
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Stream))
	w := &worker{id: cfg.Worker, c: rec.Client(), store: store, lease: cfg.Lease, now: time.Now, rng: rng}
	w.pace = func() {
		for _, op := range rec.Drain() {
			out.write(childLine{Op: &op})
		}
		time.Sleep(time.Duration(5+rng.IntN(25)) * time.Millisecond)
	}
	out.write(childLine{Ready: true})
	w.loop(ctx, stopped.Load, cfg.MaxOps, func() { time.Sleep(10 * time.Millisecond) })
	for _, op := range rec.Drain() {
		out.write(childLine{Op: &op})
	}
	if out.err != nil {
		return 1
	}
	return 0
}

// lineWriter writes JSON lines and flushes each, keeping the first error.
type lineWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func (l *lineWriter) write(v childLine) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		b = append(b, '\n')
		_, err = l.w.Write(b)
	}
	if err == nil {
		err = l.w.Flush()
	}
	l.err = err
}
