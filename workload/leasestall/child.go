package leasestall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	workerproc "github.com/storecheck/storecheck/worker"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// RoleName is the worker role of a lease-stall worker process.
const RoleName = "lease-stall"

// OpenFunc opens the run store a URL names.
type OpenFunc func(ctx context.Context, url string) (runstore.Store, error)

// Role is the lease-stall worker process (package worker): it opens the
// store with open, says it is ready, and works until the parent closes its
// standard input, reporting every operation as it completes. A binary that
// runs the lease-stall scenario passes it to worker.Main under RoleName.
func Role(open OpenFunc) workerproc.Role {
	return func(ctx context.Context, c *workerproc.Child) error {
		var cfg childConfig
		if err := c.Config(&cfg); err != nil {
			return err
		}
		return workerMain(ctx, open, cfg, c)
	}
}

// childConfig is a worker process's configuration.
type childConfig struct {
	URL         string        `json:"url"`
	Worker      string        `json:"worker"`
	Seed        uint64        `json:"seed"`
	Stream      uint64        `json:"stream"`
	Lease       time.Duration `json:"lease"`
	FirstClient int           `json:"first_client"`
	MaxOps      int           `json:"max_ops"`
}

// childLine is one message of a worker process: first "ready", then one
// "op" per operation.
type childLine struct {
	Type string     `json:"type"`
	Op   *leases.Op `json:"op,omitempty"`
}

// workerMain opens the store, says it is ready, and works until stdin
// closes (the parent's stop), sending every operation as it completes.
func workerMain(ctx context.Context, open OpenFunc, cfg childConfig, c *workerproc.Child) error {
	store, err := open(ctx, cfg.URL)
	if err != nil {
		return fmt.Errorf("open %s: %w", cfg.URL, err)
	}
	defer store.Close()
	var stopped atomic.Bool
	go func() {
		for {
			if _, ok := c.Line(); !ok {
				break // the parent closed stdin
			}
		}
		stopped.Store(true)
	}()
	var sendErr error
	send := func(l childLine) {
		if sendErr == nil {
			sendErr = c.Send(l)
		}
	}
	rec := leases.NewWallRecorder(store, cfg.FirstClient)
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Stream))
	w := &worker{id: cfg.Worker, c: rec.Client(), store: store, lease: cfg.Lease, now: time.Now, rng: rng}
	w.pace = func() {
		for _, op := range rec.Drain() {
			send(childLine{Type: "op", Op: &op})
		}
		time.Sleep(time.Duration(5+rng.IntN(25)) * time.Millisecond)
	}
	send(childLine{Type: "ready"})
	w.loop(ctx, stopped.Load, cfg.MaxOps, func() { time.Sleep(10 * time.Millisecond) })
	for _, op := range rec.Drain() {
		send(childLine{Type: "op", Op: &op})
	}
	return sendErr
}
