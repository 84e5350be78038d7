package leasestall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// takeover is how a stall round ends.
type takeover int

const (
	// expiredOnly: the victim wakes before anyone touched its run; its
	// lease has merely expired. Then the run is swept and claimed again.
	expiredOnly takeover = iota
	// otherWorker: the run is swept and claimed by another worker before
	// the victim wakes.
	otherWorker
	// sameWorker: the run is swept and claimed again under the victim's
	// own worker id, as a restarted process with a fixed id would; only
	// the fencing token tells the two incarnations apart.
	sameWorker
)

func (t takeover) String() string {
	return [...]string{"expired-only", "other-worker", "same-worker"}[t]
}

// goroutineRun is one run of goroutine mode.
type goroutineRun struct {
	cfg   Config
	store runstore.Store
	clk   *logicalClock
	rec   *leases.Recorder
	coord *leases.Client // the coordinator's own operations: sweeps, takeovers
	// claimGate is write-locked while the fault hands a run over, so that
	// background workers cannot claim it first.
	claimGate sync.RWMutex
	rng       *rand.Rand // the coordinator's; workers have their own

	stalls     int
	interrupts int // holders whose run was interrupted under them
	found      []leases.Violation
	notes      []string
}

// RunGoroutines runs the workload with worker goroutines on an injected
// clock against store, which must be empty: a create race, background
// workers, and cfg.Rounds stall rounds that rotate through the three
// takeover kinds. The error is a harness failure; broken guarantees are in
// the result.
func RunGoroutines(ctx context.Context, store runstore.Store, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults(false)
	if err := cfg.check(); err != nil {
		return nil, err
	}
	g := &goroutineRun{cfg: cfg, store: store, clk: &logicalClock{base: epoch}, rng: rand.New(rand.NewPCG(cfg.Seed, 0))}
	_, found, err := raceCreates(ctx, store, cfg.Sessions, cfg.CreateClients, g.clk.Now())
	if err != nil {
		return nil, fmt.Errorf("lease-stall: create phase: %w", err)
	}
	g.found = found
	g.rec = leases.NewRecorder(store)
	g.coord = g.rec.Client()

	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		w := g.newWorker(fmt.Sprintf("worker-%d", i), uint64(i)+1)
		w.claimGate = &g.claimGate
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, stop.Load, cfg.WorkerOps, func() {
				g.clk.Advance(5 * time.Millisecond)
				time.Sleep(200 * time.Microsecond)
			})
		}()
	}
	for k := range cfg.Rounds {
		if err := g.round(ctx, k); err != nil {
			stop.Store(true)
			wg.Wait()
			return nil, err
		}
		if k%3 == 2 {
			g.interrupt(ctx, k)
		}
		g.progress()
		// Let the background workers make progress between faults.
		time.Sleep(2 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	res, err := finish(ctx, "goroutines", store, g.rec.History(), g.found, g.notes)
	if err != nil {
		return nil, err
	}
	res.Counts.Stalls, res.Counts.Interrupts = g.stalls, g.interrupts
	return res, nil
}

func (g *goroutineRun) progress() {
	if g.cfg.Progress != nil {
		g.cfg.Progress.Store(int64(g.rec.Len()))
	}
}

// newWorker returns a worker on the logical clock with its own client and
// random source; each operation moves the clock on by 1–20 ms.
func (g *goroutineRun) newWorker(id string, stream uint64) *worker {
	rng := rand.New(rand.NewPCG(g.cfg.Seed, stream))
	return &worker{id: id, c: g.rec.Client(), store: g.store, lease: g.cfg.Lease, now: g.clk.Now, rng: rng,
		pace: func() {
			g.clk.Advance(time.Duration(1+rng.IntN(20)) * time.Millisecond)
			time.Sleep(100 * time.Microsecond)
		}}
}

// round is one fault: a victim claims the round's run, checkpoints once and
// is paused at its gate; the clock passes its lease; depending on the
// round, the run is swept and taken over before the victim wakes or after;
// the victim wakes and tries to commit, finish and renew with its old
// token; the run's new holder then checkpoints and finishes it.
func (g *goroutineRun) round(ctx context.Context, k int) error {
	kind := takeover(k % 3)
	// Background claims are held off from before the round's run exists
	// until the victim has claimed it (the highest priority).
	g.claimGate.Lock()
	if err := g.supply(ctx, k); err != nil {
		g.claimGate.Unlock()
		return err
	}
	victim := g.newWorker(fmt.Sprintf("victim-%02d", k), uint64(1000+k))
	claimed, parked := make(chan holding, 1), make(chan holding, 1)
	resume, done := make(chan struct{}), make(chan struct{})
	victim.before = func(ctx context.Context, n int, h holding) error {
		switch n {
		case 1:
			claimed <- h
		case 2:
			parked <- h
			select {
			case <-resume:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	go func() {
		defer close(done)
		h, ok := victim.claim(ctx)
		if !ok {
			claimed <- holding{}
			return
		}
		victim.work(ctx, h, 2)
	}()
	h := <-claimed
	g.claimGate.Unlock()
	if h.run == "" {
		<-done
		g.notes = append(g.notes, fmt.Sprintf("round %d: the victim found no queued run", k))
		return nil
	}
	if h.priority < roundPriority {
		g.found = append(g.found, leases.Violation{Guarantee: GuaranteeClaimOrder,
			Detail: fmt.Sprintf("round %d: %s claimed %s, priority %d, while round-%02d, priority %d and created after it, was queued (no other claim ran)",
				k, victim.id, h.run, h.priority, k, roundPriority)})
	}
	select {
	case h = <-parked:
	case <-done:
		g.notes = append(g.notes, fmt.Sprintf("round %d: the victim's first checkpoint on %s failed; no stall", k, h.run))
		return nil
	}
	// The stall: the clock passes the victim's lease while it is paused.
	g.stalls++
	g.clk.AdvanceTo(h.expires.Add(g.cfg.Lease / 4))
	var taker string
	switch kind {
	case expiredOnly, otherWorker:
		taker = fmt.Sprintf("taker-%02d", k)
	case sameWorker:
		taker = victim.id
	}
	if kind == expiredOnly {
		close(resume)
		<-done
	}
	th, ok := g.takeOver(ctx, k, h, taker)
	if kind != expiredOnly {
		close(resume)
		<-done
	}
	if ok {
		g.serveNewHolder(ctx, k, th)
	}
	return nil
}

// roundPriority is the priority of each round's run, above every other run
// of the workload.
const roundPriority = 100

// supply creates two background runs and then, a logical millisecond
// later, the round's run (roundPriority): the newest queued run is the one
// claim_next must take, so that a store ordering the queue by age gives
// the victim another.
func (g *goroutineRun) supply(ctx context.Context, k int) error {
	prios := []int64{roundPriority, int64(g.rng.IntN(10)), int64(g.rng.IntN(10))}
	for _, j := range []int{1, 2, 0} {
		prio := prios[j]
		id := fmt.Sprintf("supply-%02d-%d", k, j)
		if j == 0 {
			g.clk.Advance(time.Millisecond)
			id = fmt.Sprintf("round-%02d", k)
		}
		_, err := g.store.CreateRun(ctx, runstore.NewRun{ID: id, TenantID: "lease-stall", SessionID: id, PlanID: "plan",
			RevisionID: "rev", Priority: prio, State: []byte(`{"seq":0}`), Now: g.clk.Now()})
		if err != nil {
			return fmt.Errorf("lease-stall: round %d: create run %s in a fresh session: %w", k, id, err)
		}
	}
	return nil
}

// takeOver sweeps expired leases and claims the victim's run as worker,
// with background claims held off. The taker's lease is long, so that the
// background workers' clock cannot expire it before it is served.
func (g *goroutineRun) takeOver(ctx context.Context, k int, victim holding, worker string) (holding, bool) {
	runID := victim.run
	g.claimGate.Lock()
	defer g.claimGate.Unlock()
	swept := g.clk.Now()
	requeued, err := g.coord.Requeue(ctx, swept)
	if err != nil {
		g.notes = append(g.notes, fmt.Sprintf("round %d: sweep failed: %v", k, err))
		return holding{}, false
	}
	g.checkSwept(ctx, k, victim, swept, requeued)
	lease := 10 * g.cfg.Lease
	cl, err := g.coord.Claim(ctx, worker, lease, g.clk.Now())
	if err != nil || cl == nil {
		g.notes = append(g.notes, fmt.Sprintf("round %d: no run to take over after the sweep (%v)", k, err))
		return holding{}, false
	}
	h := holding{run: cl.Run.ID, fence: runstore.Fence{Worker: worker, Token: cl.Lease.Token}, version: cl.Run.Version, expires: cl.Lease.ExpiresAt}
	if cl.Run.ID != runID {
		// The stalled run was not requeued (a zombie may have finished
		// it); hand this one back.
		g.notes = append(g.notes, fmt.Sprintf("round %d: the sweep did not requeue %s; claimed %s instead", k, runID, cl.Run.ID))
		_, _ = g.coord.Finish(ctx, runstore.Finish{RunID: h.run, Fence: h.fence, ExpectedVersion: h.version, Target: runstore.Queued, Now: g.clk.Now()})
		return holding{}, false
	}
	return h, true
}

// checkSwept holds the sweep to its promise: the victim's lease expired at
// victim.expires, before the sweep's now, so a sweep that returned must
// have put its run back in the queue. A run still running is a violation
// only if the victim's fence is refused at the sweep's now, that is if no
// renewal the store accepted (a zombie's, on a store that lets it) made
// the lease live again; a run expired but not yet swept is no violation,
// which is why this is checked after a sweep and nowhere else.
func (g *goroutineRun) checkSwept(ctx context.Context, k int, victim holding, swept time.Time, requeued []string) {
	if slices.Contains(requeued, victim.run) {
		return
	}
	run, err := g.store.GetRun(ctx, victim.run)
	if err != nil || run.Status != runstore.Running {
		return // not running (a zombie finished it?): takeOver notes it
	}
	if err := g.store.AssertFencingToken(ctx, victim.run, victim.fence, swept); runstore.Kind(err) != "stale_lease" {
		return
	}
	g.found = append(g.found, leases.Violation{Guarantee: GuaranteeRequeue,
		Detail: fmt.Sprintf("round %d: requeue_expired_leases at %s returned %q, but %s is still running: its lease (%s, token %d) expired at %s, %v before the sweep, and the fence refuses its holder",
			k, runstore.FormatTime(swept), requeued, victim.run, victim.fence.Worker, victim.fence.Token,
			runstore.FormatTime(victim.expires), swept.Sub(victim.expires))})
}

// serveNewHolder checkpoints and finishes the taken-over run: on a correct
// store both succeed while the new holder's lease lasts. The background
// workers move the logical clock while these calls wait for the store (a
// starved writer on a loaded machine): a call made at or past the lease's
// expiry may be refused, so it is not made, and the round says why.
func (g *goroutineRun) serveNewHolder(ctx context.Context, k int, h holding) {
	if cp, err := g.store.LatestCheckpoint(ctx, h.run); err == nil && cp != nil {
		h.seq = cp.Sequence
	}
	now := func(call string) (time.Time, bool) {
		t := g.clk.Now()
		if !t.Before(h.expires) {
			g.notes = append(g.notes, fmt.Sprintf("round %d: %s's lease on %s ran out on the logical clock (the other workers moved it %v past the expiry) before its %s; not made",
				k, h.fence.Worker, h.run, t.Sub(h.expires), call))
			return t, false
		}
		return t, true
	}
	w := &worker{}
	t, ok := now("checkpoint")
	if !ok {
		return
	}
	run, err := g.coord.Commit(ctx, w.checkpoint(h, t), h.fence, h.version)
	if err == nil {
		if t, ok = now("finish"); !ok {
			return
		}
		_, err = g.coord.Finish(ctx, runstore.Finish{RunID: h.run, Fence: h.fence, ExpectedVersion: run.Version, Target: runstore.Completed, Now: t})
	}
	if err != nil {
		g.found = append(g.found, leases.Violation{Guarantee: GuaranteeNewHolder,
			Detail: fmt.Sprintf("round %d (%s): %s holds %s with token %d, but: %v", k, takeover(k%3), h.fence.Worker, h.run, h.fence.Token, err)})
	}
}
