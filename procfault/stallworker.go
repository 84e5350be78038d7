package procfault

import (
	"bytes"
	"context"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/worker"
	"github.com/storecheck/storecheck/workload"
)

// stallWorker is a stall-mode worker: a share of a concurrent workload's
// clients, recorded on the clock the parent shares with every worker.
type stallWorker struct {
	cfg     workerConfig
	em      *emitter
	in      *inbox
	commits atomic.Int64 // commits that reached their BeforeCommit hook
}

// runStallWorker opens the store, reports ready, waits for the parent's
// "go", runs its clients of the workload for the configured duration and
// reports the history it recorded. When told, one of its commits stops in
// its BeforeCommit hook, holding the write lock, until the parent says
// "release" (the parent stops the process meanwhile).
func runStallWorker(ctx context.Context, cfg workerConfig, em *emitter, in *inbox) error {
	w := &stallWorker{cfg: cfg, em: em, in: in}
	store, _, err := openStore(ctx, cfg.URL, backends.FileOptions{
		Hooks: sqlstore.Hooks{BeforeCommit: w.beforeCommit},
		Busy:  time.Duration(cfg.BusyTimeoutMS) * time.Millisecond,
	})
	if err != nil {
		return em.fail("open", err)
	}
	defer store.Close()
	rec := linearizability.NewRecorderAt(store, linearizability.SharedBase(cfg.BaseWallNS))
	if err := em.send(message{Type: msgReady}); err != nil {
		return err
	}
	select {
	case <-w.in.start:
	case <-ctx.Done():
		return em.fail("wait for go", ctx.Err())
	}
	steps, err := workload.Drive(ctx, rec, workload.Config{
		Clients: cfg.Clients, FirstClient: cfg.FirstClient, Executions: cfg.Executions, Seed: cfg.Seed,
		Duration:  time.Duration(cfg.DurationMS) * time.Millisecond,
		OpTimeout: time.Duration(cfg.OpTimeoutMS) * time.Millisecond,
		TraceMax:  model.DefaultTraceMax,
	})
	if err != nil {
		return em.fail("workload", err)
	}
	h := rec.History()
	var body bytes.Buffer
	if err := linearizability.WriteJSONL(&body, h); err != nil {
		return em.fail("history", err)
	}
	return em.sendBody(message{Type: msgHistory, Steps: steps, Count: len(h.Ops)}, body.Bytes())
}

// beforeCommit is sqlstore's BeforeCommit hook. The commit holds the write
// lock here; the StallAt-th one announces it and waits for "release".
func (w *stallWorker) beforeCommit(ctx context.Context, _ *model.Execution) error {
	n := w.commits.Add(1)
	if w.cfg.StallAt == 0 || n != int64(w.cfg.StallAt) {
		return nil
	}
	if err := w.em.send(message{Type: msgLocked, N: int(n)}); err != nil {
		return err
	}
	t := time.NewTimer(holdMax)
	defer t.Stop()
	select {
	case <-w.in.release:
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}

// inbox reads the parent's lines from standard input.
type inbox struct {
	start, release chan struct{} // closed at "go" and at "release"
}

func newInbox(c *worker.Child) *inbox {
	in := &inbox{start: make(chan struct{}), release: make(chan struct{})}
	go in.read(c)
	return in
}

// read runs until standard input ends, which is when the parent closes it
// or dies; the worker does not wait for it.
func (in *inbox) read(c *worker.Child) {
	started, released := false, false
	for {
		line, ok := c.Line()
		if !ok {
			return
		}
		switch line {
		case lineGo:
			if !started {
				started = true
				close(in.start)
			}
		case lineRelease:
			if !released {
				released = true
				close(in.release)
			}
		}
	}
}
