package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/internal/wait"
)

// A Plan is a set of faults, each with its own target and its own time:
// injected at a moment after the plan starts or when an event fires (a
// worker announcing that it holds the write lock, a commit reaching its
// hook), held for a window or until another event, then healed. Every
// fault of every scenario is a Fault value run by a Schedule (one after
// another, for as long as a context lives) or by a Plan.

// Step is one fault of a plan.
type Step struct {
	Fault Fault
	// On is what the fault acts on.
	On any
	// At is when the fault is injected, after the plan starts. Trigger,
	// when set, injects it when it fires instead (or not at all, when the
	// plan's context ends first).
	At      time.Duration
	Trigger <-chan struct{}
	// For is how long the fault holds before its heal; Until, when set,
	// heals it when it fires instead (or when the plan's context ends).
	For   time.Duration
	Until <-chan struct{}
}

// Plan runs its steps at once, each on its own time.
type Plan struct {
	Steps []Step
	// Seed seeds the random choices faults make (which follower).
	Seed uint64
}

// End is when the last timed step has healed, after the plan starts.
func (p Plan) End() time.Duration {
	var end time.Duration
	for _, s := range p.Steps {
		if s.Trigger == nil && s.Until == nil {
			end = max(end, s.At+s.For)
		}
	}
	return end
}

// Available reports why some step's fault cannot act on its target.
func (p Plan) Available() error {
	var errs []error
	for _, s := range p.Steps {
		if err := s.Fault.Available(s.On); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Fault.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// Run injects every step when its time comes, heals it when its window
// ends (at once when ctx ends), records each in tl with times from now,
// and returns once every fault it injected is healed or its heal failed.
// The error joins the faults that could not be injected or healed.
func (p Plan) Run(ctx context.Context, now func() int64, tl *evidence.Timeline) error {
	start := time.Now()
	errs := make([]error, len(p.Steps))
	var wg sync.WaitGroup
	for i, s := range p.Steps {
		rng := rand.New(rand.NewPCG(p.Seed, 0xfa11<<16|uint64(i)))
		wg.Go(func() { errs[i] = s.run(ctx, start, rng, now, tl) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// run waits for the step's moment, injects, holds, heals and records.
func (s Step) run(ctx context.Context, start time.Time, rng *rand.Rand, now func() int64, tl *evidence.Timeline) error {
	if !s.begin(ctx, start) {
		return nil
	}
	ev := evidence.Fault{Fault: s.Fault.Name(), StartNS: now()}
	inj, err := inject(ctx, s.Fault, s.On, rng)
	ev.Target, ev.Detail, ev.Metrics = inj.Target, inj.Detail, inj.Metrics
	var errs []error
	if err != nil {
		ev.Error, ev.NotInjected = err.Error(), true
		errs = append(errs, fmt.Errorf("inject %s: %w", s.Fault.Name(), err))
	} else {
		s.hold(ctx)
	}
	if inj.Heal != nil {
		if herr := heal(ctx, inj.Heal); herr != nil {
			ev.Error = joinText(ev.Error, "heal: "+herr.Error())
			errs = append(errs, fmt.Errorf("heal %s of %s: %w", s.Fault.Name(), inj.Target, herr))
		}
	}
	ev.EndNS = now()
	if tl != nil {
		errs = append(errs, tl.Add(ev))
	}
	return errors.Join(errs...)
}

// begin waits for the step's moment; false when ctx ended first.
func (s Step) begin(ctx context.Context, start time.Time) bool {
	if s.Trigger != nil {
		select {
		case <-s.Trigger:
			return true
		case <-ctx.Done():
			return false
		}
	}
	return wait.Sleep(ctx, time.Until(start.Add(s.At)))
}

// hold keeps the fault in place for its window.
func (s Step) hold(ctx context.Context) {
	if s.Until != nil {
		select {
		case <-s.Until:
		case <-ctx.Done():
		}
		return
	}
	wait.Sleep(ctx, s.For)
}
