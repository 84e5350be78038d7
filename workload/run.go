package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// ErrNotStarted marks a run that could not begin (an invalid config, a store
// that is not empty): nothing was checked.
var ErrNotStarted = errors.New("workload not started")

// Run drives store with cfg's traffic, heals, and checks the history:
// porcupine per execution and the global checks (see package
// linearizability). A broken guarantee is a Result with the verdict Illegal;
// the error is for the harness only: an invalid config, a store that is not
// empty, heal reads that keep failing, ctx ending, or artifacts that cannot
// be written.
//
// The store must be empty: the checks map every row to an attempt of this
// run.
func Run(ctx context.Context, store model.Store, cfg Config) (*Result, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotStarted, err)
	}
	var notes []string
	if s, ok := store.(model.TraceMaxSetter); ok {
		s.SetTraceMax(cfg.storeTraceMax())
	} else {
		notes = append(notes, fmt.Sprintf("the store cannot be told its trace cap (no model.TraceMaxSetter); it is assumed to be %d (0: unbounded)", cfg.storeTraceMax()))
	}
	execs := cfg.executionIDs()
	if err := checkEmpty(ctx, store, execs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotStarted, err)
	}

	rec := linearizability.NewRecorder(store)
	// A store that breaks for good ends the traffic and the heal at once:
	// every later call would fail with the same error.
	live, broken, stopWatch := watchBroken(ctx, store)
	defer stopWatch()
	start := time.Now()
	wait := during(ctx, cfg, rec)
	waitObserve := observe(ctx, cfg, rec)
	steps, stalled, err := driveWatched(live, rec, cfg)
	if err != nil && ctx.Err() == nil && broken() != nil {
		err = nil // the traffic stopped at the break
	}
	if derr := wait(); err == nil && derr != nil {
		err = fmt.Errorf("workload: alongside the traffic: %w", derr)
	}
	if oerr := waitObserve(); err == nil && oerr != nil {
		err = fmt.Errorf("workload: observing alongside the traffic: %w", oerr)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Notes: notes, Seed: cfg.Seed, Steps: steps, PlanDigest: PlanDigest(cfg), TrafficTime: time.Since(start), Stalled: stalled}

	// A store that does not serve the heal reads did not recover: that is
	// a finding (Result.NotRecovered), and the history up to it is still
	// checked, the unanswered reads as failed.
	var healErr error
	if broken() == nil {
		healErr = linearizability.HealWithin(live, rec.HealClient(), rec.History(), cfg.RecoveryBound)
		if healErr == nil {
			healErr = linearizability.HealReplicasWithin(live, rec, cfg.Replicas, execs, cfg.RecoveryBound)
		}
	}
	if healErr != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("workload stopped during the heal: %w", ctx.Err())
	}
	if res.Broken = broken(); res.Broken != nil {
		// Not a store that failed to recover: one that broke, and the
		// reads it did not serve say nothing more.
		healErr = nil
	}
	res.NotRecovered = healErr
	h := rec.History()
	h.Meta = cfg.meta()
	rep, err := linearizability.Check(ctx, h, linearizability.Options{Timeout: cfg.CheckTimeout})
	if err != nil {
		return nil, fmt.Errorf("workload: check: %w", err)
	}
	res.fill(h, rep)
	if cfg.OutDir != "" && (rep.Verdict != linearizability.Ok || cfg.KeepArtifacts) {
		if res.Artifacts, err = writeArtifacts(ctx, cfg.OutDir, h, rep, cfg.CheckTimeout, cfg.KeepArtifacts); err != nil {
			return res, err
		}
	}
	return res, nil
}

// driveWatched is drive under a stall watch: when the store answers no
// call for cfg.StallBound, the traffic stops and the stall is returned
// apart from the error (it is a finding, not a harness failure).
func driveWatched(ctx context.Context, rec *linearizability.Recorder, cfg Config) (steps int, stalled, err error) {
	traffic, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	watch := newStallWatch(cfg)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watch.run(traffic, stop)
	}()
	steps, err = drive(traffic, rec, cfg, watch)
	stop(nil)
	<-watched
	stalled = context.Cause(traffic)
	if ctx.Err() != nil || !errors.Is(stalled, ErrStalled) {
		return steps, nil, err
	}
	// The traffic's own end was the stall: drive's "stopped" error is it.
	return steps, stalled, nil
}

// checkEmpty refuses a store that holds rows the run did not write.
func checkEmpty(ctx context.Context, store model.Store, execs []string) error {
	var found []string
	for _, e := range execs {
		if exe, err := store.Load(ctx, e); err != nil {
			return fmt.Errorf("workload: check the store is empty: %w", err)
		} else if exe != nil {
			found = append(found, "execution "+e)
		}
	}
	outbox, err1 := store.PendingOutbox(ctx)
	spawns, err2 := store.PendingSpawns(ctx)
	timers, err3 := store.DueTimers(ctx, math.MaxFloat64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("workload: check the store is empty: %w", err)
	}
	if len(outbox)+len(spawns)+len(timers) > 0 {
		found = append(found, fmt.Sprintf("%d outbox, %d spawn and %d timer rows", len(outbox), len(spawns), len(timers)))
	}
	if len(found) > 0 {
		return fmt.Errorf("workload: the store is not empty (%s); open a fresh one", strings.Join(found, ", "))
	}
	return nil
}

// writeArtifacts saves what is needed to debug a failed run: the history
// (re-checkable offline with linearizability.CheckFile), the violations and,
// for an Illegal verdict, porcupine's visualization of the executions
// involved.
func writeArtifacts(ctx context.Context, dir string, h linearizability.History, rep *linearizability.Report, timeout time.Duration, keep bool) ([]string, error) {
	f := evidence.At(dir)
	var written []string
	add := func(path string, err error) error {
		if err != nil {
			return fmt.Errorf("workload: artifacts: %w", err)
		}
		written = append(written, path)
		return nil
	}
	if err := add(f.WriteHistory(h)); err != nil {
		return written, err
	}
	if err := add(f.WriteVerdict(evidence.VerdictOf(rep))); err != nil {
		return written, err
	}
	if rep.Verdict == linearizability.Illegal || (keep && rep.Verdict == linearizability.Ok) {
		if err := add(f.WriteVisualization(ctx, h, rep, linearizability.Options{Timeout: timeout}, nil)); err != nil {
			return written, err
		}
	}
	return written, nil
}

// observe starts cfg.Observe, if set, beside the traffic (alongside).
func observe(ctx context.Context, cfg Config, rec *linearizability.Recorder) func() error {
	if cfg.Observe == nil {
		return alongside(ctx, nil)
	}
	newClient := func(store model.Store, name string) *linearizability.Client {
		return rec.NewClient(linearizability.ClientOptions{Store: store, Replica: name})
	}
	return alongside(ctx, func(ctx context.Context) error { return cfg.Observe(ctx, cfg.executionIDs(), newClient) })
}

// during starts cfg.During, if set, beside the traffic (alongside).
func during(ctx context.Context, cfg Config, rec *linearizability.Recorder) func() error {
	if cfg.During == nil {
		return alongside(ctx, nil)
	}
	return alongside(ctx, func(ctx context.Context) error { return cfg.During(ctx, rec.Now) })
}

// alongside starts fn, if not nil, on a context of its own, and returns
// the function that ends that context and waits for fn's error.
func alongside(ctx context.Context, fn func(context.Context) error) func() error {
	if fn == nil {
		return func() error { return nil }
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- fn(fctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// brokenPoll is how often a run asks a model.Breakable store whether it
// broke.
const brokenPoll = 20 * time.Millisecond

// watchBroken watches a store that can break for good (model.Breakable):
// the context it returns ends, with the store's error as its cause, once
// the store breaks. broken returns that error (nil while the store is
// usable, and always for a store that cannot say); stop ends the watch.
func watchBroken(ctx context.Context, store model.Store) (live context.Context, broken func() error, stop func()) {
	b, ok := store.(model.Breakable)
	if !ok {
		return ctx, func() error { return nil }, func() {}
	}
	live, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(brokenPoll)
		defer tick.Stop()
		for {
			select {
			case <-live.Done():
				return
			case <-done:
				return
			case <-tick.C:
			}
			if err := b.Broken(); err != nil {
				cancel(err)
				return
			}
		}
	}()
	return live, b.Broken, func() {
		close(done)
		<-watched
		cancel(nil)
	}
}
