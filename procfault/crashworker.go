package procfault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// holdMax bounds how long a held commit waits to be killed; past it the
// commit goes on.
const holdMax = 10 * time.Second

// crashWorker is a crash-mode worker: one writer committing back to back.
// The BeforeCommit hook runs inside Commit, on the committing goroutine, so
// n and hookAt need no lock.
type crashWorker struct {
	cfg    workerConfig
	em     *emitter
	in     *inbox
	n      int       // the commit in progress
	hookAt time.Time // when its BeforeCommit hook fired
}

// runCrashWorker opens the store (recovering it after the previous crash),
// reports its integrity and tables, then commits until killed, reporting
// each commit before the call, at its BeforeCommit hook and after it
// returned.
func runCrashWorker(ctx context.Context, cfg workerConfig, em *emitter, in *inbox) error {
	w := &crashWorker{cfg: cfg, em: em, in: in}
	start := time.Now()
	store, hooked, err := openStore(ctx, cfg.URL, backends.FileOptions{
		Hooks:       sqlstore.Hooks{BeforeCommit: w.beforeCommit},
		Synchronous: cfg.Synchronous,
	})
	if err != nil {
		return em.fail("open", err)
	}
	defer store.Close()
	dump, integrity, err := recoverTables(ctx, store, cfg.Reset)
	if err != nil {
		return em.fail("recover", err)
	}
	err = em.send(message{Type: msgRecovered, Integrity: integrity, Dump: dump, Hooks: hooked,
		RecoveryUS: time.Since(start).Microseconds()})
	if err != nil || cfg.Mode == modeVerify {
		return err
	}
	gen, err := newCrashGen(cfg.Seed, cfg.Cycle, dump)
	if err != nil {
		return em.fail("recover", err)
	}
	if err := em.send(message{Type: msgReady}); err != nil {
		return err
	}
	for n := 1; n <= cfg.MaxCommits; n++ {
		if done, err := w.commit(ctx, store, gen, n); done || err != nil {
			return err
		}
	}
	if err := em.send(message{Type: msgIdle}); err != nil {
		return err
	}
	<-ctx.Done() // wait to be killed, or for the end of the worker's life
	return nil
}

// recoverTables empties the tables when told (the first cycle), then runs
// the integrity check and dumps the six tables.
func recoverTables(ctx context.Context, store model.Store, reset bool) (*model.Dump, string, error) {
	if reset {
		r, ok := store.(model.Resetter)
		if !ok {
			return nil, "", fmt.Errorf("the store cannot be emptied (no model.Resetter)")
		}
		if err := r.Reset(ctx); err != nil {
			return nil, "", err
		}
	}
	integrity, err := integrityCheck(ctx, store)
	if err != nil {
		return nil, "", err
	}
	d, ok := store.(model.Dumper)
	if !ok {
		return nil, "", fmt.Errorf("the store cannot show its tables (no model.Dumper)")
	}
	dump, err := d.Dump(ctx)
	if err != nil {
		return nil, "", err
	}
	return dump, integrity, nil
}

// commit runs commit n: begin, the call (during which the hook reports
// precommit), then ack or fail. done is true after a failed commit: the
// worker stops, since what it would commit next depends on an outcome it
// may not know.
func (w *crashWorker) commit(ctx context.Context, store model.Store, gen *crashGen, n int) (done bool, err error) {
	exe, b := gen.next(n)
	if err := w.em.send(message{Type: msgBegin, N: n, Commit: toWire(exe, b)}); err != nil {
		return true, err
	}
	w.n, w.hookAt = n, time.Time{}
	start := time.Now()
	if err := store.Commit(ctx, exe, b); err != nil {
		_, conflict := model.AsConflict(err)
		notApplied := conflict || errors.Is(err, model.ErrNotApplied)
		return true, w.em.send(message{Type: msgFail, N: n, Error: err.Error(), NotApplied: notApplied})
	}
	ack := message{Type: msgAck, N: n, LatencyUS: max(time.Since(start).Microseconds(), 1)}
	if !w.hookAt.IsZero() {
		ack.CommitUS = max(time.Since(w.hookAt).Microseconds(), 1)
	}
	gen.committed(exe)
	return false, w.em.send(ack)
}

// beforeCommit is sqlstore's BeforeCommit hook: every statement of the
// commit's transaction has run and COMMIT is next. It reports that. The
// commit the parent means to kill here waits to be killed (HoldAt); the one
// it means to kill during COMMIT waits for its "go" (RaceAt), so that the
// parent's timer starts as COMMIT does.
func (w *crashWorker) beforeCommit(ctx context.Context, _ *model.Execution) error {
	if err := w.em.send(message{Type: msgPreCommit, N: w.n}); err != nil {
		return err
	}
	var wake <-chan struct{}
	switch w.n {
	case w.cfg.HoldAt:
		wake = nil // only the kill, or the end of holdMax, ends the wait
	case w.cfg.RaceAt:
		wake = w.in.start
	default:
		w.hookAt = time.Now()
		return nil
	}
	t := time.NewTimer(holdMax)
	defer t.Stop()
	select {
	case <-wake:
	case <-ctx.Done():
	case <-t.C:
	}
	w.hookAt = time.Now()
	return nil
}
