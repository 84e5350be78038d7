package leasestall

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/evidence"
	workerproc "github.com/storecheck/storecheck/worker"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
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
	p     *workerproc.Process
	ops   []leases.Op
	read  chan struct{} // closed when its messages are drained
	ready chan error
	mu    sync.Mutex // guards ops
}

// RunProcesses runs the workload with cfg.Processes worker processes that
// share the database cfg.URL names, which store (the same database) must
// have emptied. The parent creates runs, sweeps expired leases every
// quarter lease and, while the traffic lasts, stops one worker with SIGSTOP
// for cfg.Stall, then resumes it with SIGCONT. Every process is reaped
// before RunProcesses returns. The error wraps ErrNoWorkers when the mode
// could not run; broken guarantees are in the result.
func RunProcesses(ctx context.Context, store runstore.Store, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults(true)
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if _, inside := workerproc.Args(); inside {
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
	p := &processRun{cfg: cfg, store: store, coord: rec.Client(), rng: rand.New(rand.NewPCG(cfg.Seed, 0)), timeline: &evidence.Timeline{}}
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

// workerCommand is how worker processes start.
func workerCommand(cfg Config) (workerproc.Command, error) {
	if cfg.WorkerCommand != nil {
		return *cfg.WorkerCommand, nil
	}
	c, err := workerproc.Self()
	if err != nil {
		return c, fmt.Errorf("%w: %v", ErrNoWorkers, err)
	}
	return c, nil
}

// startChildren starts every worker process and waits until each says it
// is ready. Whatever was started is returned, for reap, even on error.
func startChildren(ctx context.Context, cfg Config) ([]*child, error) {
	cmd, err := workerCommand(cfg)
	if err != nil {
		return nil, err
	}
	var children []*child
	for i := range cfg.Processes {
		conf := childConfig{URL: cfg.URL, Worker: fmt.Sprintf("proc-%d", i), Seed: cfg.Seed, Stream: uint64(i) + 1,
			Lease: cfg.Lease, FirstClient: (i + 1) * 1_000_000, MaxOps: 100_000}
		// Not the run's context: the parent stops its workers itself
		// (stopChildren, reap), after a SIGCONT.
		p, err := workerproc.Start(context.WithoutCancel(ctx), cmd, RoleName, conf)
		if err != nil {
			return children, fmt.Errorf("%w: %v", ErrNoWorkers, err)
		}
		c := &child{p: p, read: make(chan struct{}), ready: make(chan error, 1)}
		children = append(children, c)
		go c.collect()
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

// collect reads a worker's messages until it exits.
func (c *child) collect() {
	defer close(c.read)
	first := true
	for m := range c.p.Events() {
		var l childLine
		err := m.Decode(&l)
		switch {
		case first && (err != nil || l.Type != "ready"):
			var e struct {
				Error string `json:"error"`
			}
			_ = m.Decode(&e)
			c.ready <- fmt.Errorf("it did not answer as a worker (%s %s)", m.Type, e.Error)
			for range c.p.Events() {
			}
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
		c.ready <- fmt.Errorf("it did not answer as a worker: %s", c.p.Status())
	}
}

// stopChildren tells every worker to stop (closing its stdin, after a
// SIGCONT in case it is stopped), waits for its output, and returns each
// worker's operations.
func stopChildren(children []*child) [][]leases.Op {
	var out [][]leases.Op
	for _, c := range children {
		_ = c.p.Signal(syscall.SIGCONT)
		_ = c.p.CloseInput()
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

// reap makes sure no worker outlives the run: it resumes and closes any
// still running, kills those that do not stop in time, and reaps every one.
func reap(children []*child) {
	for _, c := range children {
		_ = c.p.Signal(syscall.SIGCONT)
		_ = c.p.CloseInput()
		select {
		case <-c.p.Exited():
		case <-time.After(stopTimeout):
		}
		c.p.Close()
	}
}

// processRun is the parent's side of one run of process mode.
type processRun struct {
	cfg      Config
	store    runstore.Store
	coord    *leases.Client
	rng      *rand.Rand
	timeline *evidence.Timeline // the stalls, on the wall clock
	stalls   int
	notes    []string
	next     int // supply runs created
}

// traffic lets the workers run for cfg.Duration while the parent sweeps
// and supplies runs, and a plan of faults stops one worker at a time
// (SIGSTOP) for cfg.Stall, a lease apart.
func (p *processRun) traffic(ctx context.Context, children []*child) error {
	deadline := time.Now().Add(p.cfg.Duration)
	stalls := p.stallPlan(children)
	p.stalls = len(stalls.Steps)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	faults := make(chan error, 1)
	go func() { faults <- stalls.Run(tctx, func() int64 { return time.Now().UnixNano() }, p.timeline) }()
	sweep := time.NewTicker(p.cfg.Lease / 4)
	defer sweep.Stop()
	var err error
	for err == nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			continue
		case <-sweep.C:
		}
		now := time.Now()
		if _, rerr := p.coord.Requeue(ctx, now); rerr != nil {
			p.notes = append(p.notes, fmt.Sprintf("sweep failed: %v", rerr))
		}
		err = p.supply(ctx, now)
	}
	cancel() // every stalled worker is continued before Run returns
	if ferr := <-faults; ferr != nil {
		err = errors.Join(err, fmt.Errorf("lease-stall: stalls: %w", ferr))
	}
	return err
}

// stallPlan stops a seeded worker for cfg.Stall once a lease has passed,
// then again a lease after each resume, while the traffic lasts.
func (p *processRun) stallPlan(children []*child) chaos.Plan {
	var plan chaos.Plan
	for at := p.cfg.Lease; at+p.cfg.Stall < p.cfg.Duration; at += p.cfg.Stall + p.cfg.Lease {
		c := children[p.rng.IntN(len(children))]
		plan.Steps = append(plan.Steps, chaos.Step{Fault: chaos.StopProcess, On: c.p, At: at, For: p.cfg.Stall})
	}
	return plan
}

// supply keeps a few runs queued for the workers.
func (p *processRun) supply(ctx context.Context, now time.Time) error {
	queued, err := p.store.ListRuns(ctx, runstore.ListFilter{TenantID: "lease-stall", Statuses: []runstore.Status{runstore.Queued}})
	if err != nil {
		return fmt.Errorf("lease-stall: list queued runs: %w", err)
	}
	for range max(0, 2*p.cfg.Processes-len(queued)) {
		id := fmt.Sprintf("supply-%03d", p.next)
		p.next++
		_, err := p.store.CreateRun(ctx, runstore.NewRun{ID: id, TenantID: "lease-stall", SessionID: id, PlanID: "plan",
			RevisionID: "rev", Priority: int64(p.rng.IntN(10)), State: []byte(`{"seq":0}`), Now: now})
		if err != nil {
			return fmt.Errorf("lease-stall: create run %s in a fresh session: %w", id, err)
		}
	}
	return nil
}
