package leasestall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runs"
)

// ErrNoWorkers is returned when worker processes could not be started or
// did not answer: the mode did not run, which is not a failed check.
var ErrNoWorkers = errors.New("lease-stall: no worker processes")

// readyTimeout bounds how long a worker process may take to open the store
// and say it is ready; stopTimeout how long it may take to exit once told.
const (
	readyTimeout = 15 * time.Second
	stopTimeout  = 10 * time.Second
)

// child is one worker process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	ops    []leases.Op
	stderr *limitedWriter
	read   chan struct{} // closed when stdout is drained
	ready  chan error
	mu     sync.Mutex // guards ops
}

// RunProcesses runs the workload with cfg.Processes worker processes that
// share the database cfg.URL names, which store (the same database) must
// have emptied. The parent creates runs, sweeps expired leases every
// quarter lease and, while the traffic lasts, stops one worker with SIGSTOP
// for cfg.Stall, then resumes it with SIGCONT. Every process is reaped
// before RunProcesses returns. The error wraps ErrNoWorkers when the mode
// could not run; broken guarantees are in the result.
func RunProcesses(ctx context.Context, store runs.Store, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults(true)
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if os.Getenv(WorkerEnv) == "1" {
		return nil, fmt.Errorf("%w: already inside a worker process", ErrNoWorkers)
	}
	_, found, err := raceCreates(ctx, store, cfg.Sessions, cfg.CreateClients, time.Now())
	if err != nil {
		return nil, fmt.Errorf("lease-stall: create phase: %w", err)
	}
	rec := leases.NewWallRecorder(store, 0)
	children, err := startChildren(ctx, cfg)
	defer reap(children)
	if err != nil {
		return nil, err
	}
	p := &processRun{cfg: cfg, store: store, coord: rec.Client(), rng: rand.New(rand.NewPCG(cfg.Seed, 0))}
	if err := p.traffic(ctx, children); err != nil {
		return nil, err
	}
	ops := rec.History()
	for _, c := range stopChildren(children) {
		ops = append(ops, c...)
	}
	res, err := finish(ctx, "processes", store, ops, found, p.notes)
	if err != nil {
		return nil, err
	}
	res.Counts.Stalls = p.stalls
	return res, nil
}

// workerCommand is the command line of a worker process.
func workerCommand(cfg Config) ([]string, error) {
	if len(cfg.WorkerCommand) > 0 {
		return cfg.WorkerCommand, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoWorkers, err)
	}
	if testing.Testing() {
		// A test binary runs no tests; its TestMain calls MaybeWorker.
		return []string{exe, "-test.run=^$"}, nil
	}
	return []string{exe}, nil
}

// startChildren starts every worker process and waits until each says it
// is ready. Whatever was started is returned, for reap, even on error.
func startChildren(ctx context.Context, cfg Config) ([]*child, error) {
	argv, err := workerCommand(cfg)
	if err != nil {
		return nil, err
	}
	var children []*child
	for i := range cfg.Processes {
		c := &child{read: make(chan struct{}), ready: make(chan error, 1), stderr: &limitedWriter{n: 64 << 10}}
		c.cmd = exec.Command(argv[0], argv[1:]...)
		c.cmd.Env = append(os.Environ(), WorkerEnv+"=1")
		c.cmd.Stderr = c.stderr
		stdout, err := c.cmd.StdoutPipe()
		if err == nil {
			c.stdin, err = c.cmd.StdinPipe()
		}
		if err == nil {
			err = c.cmd.Start()
		}
		if err != nil {
			return children, fmt.Errorf("%w: start %s: %v", ErrNoWorkers, argv[0], err)
		}
		children = append(children, c)
		go c.collect(stdout)
		conf := childConfig{URL: cfg.URL, Worker: fmt.Sprintf("proc-%d", i), Seed: cfg.Seed, Stream: uint64(i) + 1,
			Lease: cfg.Lease, FirstClient: (i + 1) * 1_000_000, MaxOps: 100_000}
		line, _ := json.Marshal(conf)
		// A binary that is not a worker may exit before reading this; the
		// wait for its first line below says so better than EPIPE would.
		_, _ = c.stdin.Write(append(line, '\n'))
	}
	timeout := time.NewTimer(readyTimeout)
	defer timeout.Stop()
	for i, c := range children {
		select {
		case err := <-c.ready:
			if err != nil {
				return children, fmt.Errorf("%w: worker %d: %v", ErrNoWorkers, i, err)
			}
		case <-timeout.C:
			return children, fmt.Errorf("%w: worker %d not ready after %v", ErrNoWorkers, i, readyTimeout)
		case <-ctx.Done():
			return children, ctx.Err()
		}
	}
	return children, nil
}

// collect reads a worker's lines until its stdout closes.
func (c *child) collect(stdout io.Reader) {
	defer close(c.read)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		var l childLine
		err := json.Unmarshal(sc.Bytes(), &l)
		switch {
		case first && (err != nil || !l.Ready):
			msg := l.Error
			if err != nil || msg == "" {
				msg = fmt.Sprintf("it did not answer as a worker (first line %.80q); does the binary call leasestall.MaybeWorker?", sc.Text())
			}
			c.ready <- errors.New(msg)
			io.Copy(io.Discard, stdout)
			return
		case first:
			c.ready <- nil
		case err == nil && l.Op != nil:
			c.mu.Lock()
			c.ops = append(c.ops, *l.Op)
			c.mu.Unlock()
		}
		first = false
	}
	if first {
		c.ready <- fmt.Errorf("it exited without answering (stderr: %.200q)", c.stderr.String())
	}
}

// stopChildren tells every worker to stop (closing its stdin, after a
// SIGCONT in case it is stopped), waits for its output, and returns each
// worker's operations.
func stopChildren(children []*child) [][]leases.Op {
	var out [][]leases.Op
	for _, c := range children {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		_ = c.stdin.Close()
	}
	for _, c := range children {
		select {
		case <-c.read:
		case <-time.After(stopTimeout):
		}
		c.mu.Lock()
		out = append(out, c.ops)
		c.mu.Unlock()
	}
	return out
}

// reap makes sure no worker outlives the run: it resumes, closes and kills
// any still running, and waits for every one.
func reap(children []*child) {
	for _, c := range children {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		if c.stdin != nil {
			_ = c.stdin.Close()
		}
		done := make(chan struct{})
		go func() {
			_ = c.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			_ = c.cmd.Process.Kill()
			<-done
		}
	}
}

// processRun is the parent's side of one run of process mode.
type processRun struct {
	cfg    Config
	store  runs.Store
	coord  *leases.Client
	rng    *rand.Rand
	stalls int
	notes  []string
	next   int // supply runs created
}

// traffic lets the workers run for cfg.Duration while the parent sweeps,
// supplies runs and stalls workers, one at a time.
func (p *processRun) traffic(ctx context.Context, children []*child) error {
	deadline := time.Now().Add(p.cfg.Duration)
	sweep := time.NewTicker(p.cfg.Lease / 4)
	defer sweep.Stop()
	nextStall := time.Now().Add(p.cfg.Lease)
	var resumeAt time.Time
	var stopped *child
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			if stopped != nil {
				_ = stopped.cmd.Process.Signal(syscall.SIGCONT)
			}
			return ctx.Err()
		case <-sweep.C:
		}
		now := time.Now()
		if _, err := p.coord.Requeue(ctx, now); err != nil {
			p.notes = append(p.notes, fmt.Sprintf("sweep failed: %v", err))
		}
		if err := p.supply(ctx, now); err != nil {
			return err
		}
		switch {
		case stopped != nil && !now.Before(resumeAt):
			if err := stopped.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				return fmt.Errorf("lease-stall: resume worker %d: %w", stopped.cmd.Process.Pid, err)
			}
			stopped, nextStall = nil, now.Add(p.cfg.Lease)
		case stopped == nil && !now.Before(nextStall) && now.Add(p.cfg.Stall).Before(deadline):
			c := children[p.rng.IntN(len(children))]
			if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				return fmt.Errorf("lease-stall: stop worker %d: %w", c.cmd.Process.Pid, err)
			}
			stopped, resumeAt = c, now.Add(p.cfg.Stall)
			p.stalls++
		}
	}
	if stopped != nil {
		_ = stopped.cmd.Process.Signal(syscall.SIGCONT)
	}
	return nil
}

// supply keeps a few runs queued for the workers.
func (p *processRun) supply(ctx context.Context, now time.Time) error {
	queued, err := p.store.ListRuns(ctx, runs.ListFilter{TenantID: "lease-stall", Statuses: []runs.Status{runs.Queued}})
	if err != nil {
		return fmt.Errorf("lease-stall: list queued runs: %w", err)
	}
	for range max(0, 2*p.cfg.Processes-len(queued)) {
		id := fmt.Sprintf("supply-%03d", p.next)
		p.next++
		_, err := p.store.CreateRun(ctx, runs.NewRun{ID: id, TenantID: "lease-stall", SessionID: id, PlanID: "plan",
			RevisionID: "rev", Priority: int64(p.rng.IntN(10)), State: []byte(`{"seq":0}`), Now: now})
		if err != nil {
			return fmt.Errorf("lease-stall: create run %s in a fresh session: %w", id, err)
		}
	}
	return nil
}

// limitedWriter keeps the first n bytes written to it; it is safe to read
// while the process still writes.
type limitedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := min(len(p), l.n-l.buf.Len()); k > 0 {
		l.buf.Write(p[:k])
	}
	return len(p), nil
}

func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
