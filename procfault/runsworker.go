package procfault

import (
	"context"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/model/runstore"
)

// runRunsWorker is a run-store power-loss worker: it opens the run store
// (recovering the file after the last cut), reports its integrity check and
// tables, then runs ops back to back, reporting each before the call and
// once it returned, until killed.
func runRunsWorker(ctx context.Context, cfg workerConfig, em *emitter) error {
	start := time.Now()
	store, err := backends.OpenRuns(ctx, cfg.URL)
	if err != nil {
		return em.fail("open", err)
	}
	defer store.Close()
	dumper, ok := store.(interface {
		Dump(context.Context) (*runstore.Dump, error)
	})
	if !ok {
		return em.fail("recover", fmt.Errorf("the run store cannot dump its tables"))
	}
	integrity, err := integrityCheck(ctx, store)
	if err != nil {
		return em.fail("recover", err)
	}
	dump, err := dumper.Dump(ctx)
	if err != nil {
		return em.fail("recover", err)
	}
	err = em.send(message{Type: msgRecovered, Integrity: integrity, RunsDump: dump, RecoveryUS: time.Since(start).Microseconds()})
	if err != nil || cfg.Verify {
		return err
	}
	gen := newRunsGen(cfg.Seed, cfg.Cycle, dump)
	if err := em.send(message{Type: msgReady}); err != nil {
		return err
	}
	for n := 1; n <= cfg.MaxCommits; n++ {
		op := gen.next(n)
		if err := em.send(message{Type: msgBegin, N: n, RunsOp: &op}); err != nil {
			return err
		}
		called := time.Now()
		if err := op.apply(ctx, store); err != nil {
			return em.send(message{Type: msgFail, N: n, Error: err.Error()})
		}
		gen.done(op)
		if err := em.send(message{Type: msgAck, N: n, LatencyUS: time.Since(called).Microseconds()}); err != nil {
			return err
		}
	}
	if err := em.send(message{Type: msgIdle}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}
