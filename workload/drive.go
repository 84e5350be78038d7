package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/linearizability"
)

// Drive runs cfg's traffic through new clients of rec and returns how many
// steps they took, without healing or checking: the part of Run that a
// harness needs when one run spans several processes. Each process records
// its share of the clients (Config.FirstClient keeps their witnesses
// distinct) against the one store they all open, and the harness merges the
// histories, heals and checks them together.
//
// Unlike Run, Drive neither checks that the store started empty nor sets its
// trace cap: the harness does both once, for every process. Store errors are
// recorded, not returned; the error is for the harness (an invalid config, a
// call the recorder refused, ctx ending).
func Drive(ctx context.Context, rec *linearizability.Recorder, cfg Config) (int, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return 0, err
	}
	return drive(ctx, rec, cfg, nil)
}

// drive runs the clients of a normalized cfg until the step budget or the
// duration is spent, or ctx ends (an error, with the steps taken so far).
// watch, when set, is told of every store call that begins and of every
// one that returned within its timeout.
func drive(ctx context.Context, rec *linearizability.Recorder, cfg Config, watch *stallWatch) (int, error) {
	execs := cfg.executionIDs()
	deadline := time.Now().Add(cfg.Duration)
	errs := make([]error, cfg.Clients)
	var steps atomic.Int64
	var wg sync.WaitGroup
	flying := newInflight()
	for i := range cfg.Clients {
		c := rec.Client()
		if n := len(cfg.Replicas); n > 0 {
			r := cfg.Replicas[i%n]
			c = rec.NewClient(linearizability.ClientOptions{Store: r, Replica: r.Name(), ReadYourWrites: r.ReadYourWrites()})
		}
		w := newWorker(cfg.FirstClient+i, &cfg, c, execs, flying)
		w.watch = watch
		wg.Go(func() {
			errs[i] = w.run(ctx, deadline)
			steps.Add(int64(w.done))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("workload: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return int(steps.Load()), fmt.Errorf("workload stopped: %w", err)
	}
	return int(steps.Load()), nil
}
