package procfault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// Writer-stall defaults and bounds.
const (
	DefaultWorkers     = 3
	DefaultClients     = 2 // per worker
	DefaultExecutions  = 2
	DefaultDuration    = 2 * time.Second
	DefaultWindow      = 800 * time.Millisecond
	DefaultBusyTimeout = 200 * time.Millisecond
	// stallOpTimeout bounds each store call of a worker: longer than the
	// busy timeout, so that a write blocked by the stalled writer fails
	// with "database is locked" rather than by its context.
	stallOpTimeout = 2 * time.Second
	// stallSlack is added to a run's expected length to bound it.
	stallSlack = time.Minute
)

// StallOptions configure WriterStall. Zero fields take the defaults above.
type StallOptions struct {
	// URL is a sqlite: or libsql: file.
	URL  string
	Seed uint64
	// Workers is the number of worker processes; Clients the clients in
	// each; Executions the executions they all share.
	Workers, Clients, Executions int
	// Duration is each worker's traffic time; Window how long the stalled
	// worker stays stopped.
	Duration, Window time.Duration
	// BusyTimeout is the workers' busy timeout. It is kept below Window so
	// that a writer blocked by the stalled one gives up during the stall
	// (the backends' default of 10 s would only delay it).
	BusyTimeout time.Duration
	// CheckTimeout bounds the linearizability check (0: its default).
	CheckTimeout time.Duration
	// Command starts the workers; see SelfCommand.
	Command Command
	// OutDir, when set, is the run's evidence.Folder: it receives the
	// merged history and, when a check fails, the verdict and violations
	// and porcupine's visualization.
	OutDir string
	// Fault, when set, is told the fault being injected ("" when none).
	Fault func(string)
	// Ops, when set, counts the operations recorded, once the workers
	// report their histories.
	Ops *atomic.Int64
}

// StallResult is what a writer-stall run found.
type StallResult struct {
	// Stalled is the worker that was stopped at its StallAt-th commit,
	// holding the write lock, for Window (as measured: SIGSTOP to SIGCONT).
	Stalled, StallAt int
	Window           time.Duration
	// Busy counts the other workers' operations that failed or ended
	// indeterminate while the stall lasted: what the stall looked like to
	// them.
	Busy int
	// ClockStep is how far the wall clock moved against the monotonic
	// clock during the run (see merge.go); zero on a quiet host.
	ClockStep time.Duration
	// History is the merged history, heal reads included; Report its check.
	History linearizability.History
	Report  *linearizability.Report
	// Err is the first broken guarantee: the report's, or ErrIsolation.
	Err       error
	Artifacts []string
}

// WriterStall runs opt.Workers worker processes on one database file, each
// a share of a recorded concurrent workload. One of them is SIGSTOPped
// while its commit holds the write lock (it announces that from its
// BeforeCommit hook), and SIGCONTed after the window; the other workers'
// writes meanwhile fail with busy errors or time out, and are recorded as
// failed or indeterminate. The merged history (one clock for every process)
// is healed and checked: porcupine per execution and the global checks.
// The error is for a run that could not be made (ErrNotRun) or was
// interrupted; a broken guarantee is StallResult.Err.
func WriterStall(ctx context.Context, opt StallOptions) (*StallResult, error) {
	t, err := target("writer-stall", opt.URL, StallNeeds()...)
	if err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	store, err := t.Open(ctx, model.DefaultConfig())
	if err != nil {
		return nil, notRun("backend could not be opened: %v", err)
	}
	defer store.Close()
	if r, ok := store.(model.Resetter); ok {
		if err := r.Reset(ctx); err != nil {
			return nil, notRun("backend could not be emptied: %v", err)
		}
	}
	s := &stallRun{opt: opt, base: time.Now(), res: &StallResult{}}
	defer s.fault("")
	parts, err := s.traffic(ctx)
	if err != nil {
		return s.res, interrupted(ctx, err)
	}
	return s.res, interrupted(ctx, s.check(ctx, store, parts))
}

func (o StallOptions) withDefaults() StallOptions {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.Workers, DefaultWorkers)
	set(&o.Clients, DefaultClients)
	set(&o.Executions, DefaultExecutions)
	setD(&o.Duration, DefaultDuration)
	setD(&o.Window, DefaultWindow)
	setD(&o.BusyTimeout, DefaultBusyTimeout)
	return o
}

// stallRun is one writer-stall run in progress.
type stallRun struct {
	opt  StallOptions
	base time.Time // the common clock's zero
	res  *StallResult
	// stopAt and contAt bound the stall on the common clock; heal undoes
	// it (chaos.StopProcess's heal).
	stopAt, contAt int64
	heal           func(context.Context) error
}

func (s *stallRun) fault(f string) {
	if s.opt.Fault != nil {
		s.opt.Fault(f)
	}
}

// fromWorker is one message and the worker it came from.
type fromWorker struct {
	i  int
	m  message
	ok bool // false: the worker's pipe ended
}

// traffic starts the workers, lets them go together, stalls one when it
// says it holds the write lock, and collects their histories.
func (s *stallRun) traffic(ctx context.Context) ([][]linearizability.Operation, error) {
	rng := rand.New(rand.NewPCG(s.opt.Seed, 2<<32))
	s.res.Stalled, s.res.StallAt = rng.IntN(s.opt.Workers), 2+rng.IntN(6)
	ws := make([]*proc, 0, s.opt.Workers)
	defer func() {
		for _, w := range ws {
			w.close()
		}
	}()
	deadline := time.NewTimer(s.opt.Duration + s.opt.Window + stallSlack)
	defer deadline.Stop()
	for i := range s.opt.Workers {
		w, err := startWorker(ctx, s.opt.Command, s.workerConfig(i))
		if err != nil {
			return nil, notRun("%v", err)
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		if _, err := await(ctx, w, msgReady, deadline.C); err != nil {
			return nil, err
		}
	}
	for _, w := range ws {
		if err := w.tell(lineGo); err != nil {
			return nil, notRun("%v", err)
		}
	}
	quit := make(chan struct{})
	defer close(quit)
	all := make(chan fromWorker)
	for i, w := range ws {
		go forward(i, w, all, quit)
	}
	return s.follow(ctx, ws, all, deadline.C)
}

// forward passes w's messages to all until w's pipe ends or quit closes.
func forward(i int, w *proc, all chan<- fromWorker, quit <-chan struct{}) {
	for m := range w.events {
		select {
		case all <- fromWorker{i, m, true}:
		case <-quit:
			return
		}
	}
	select {
	case all <- fromWorker{i: i}:
	case <-quit:
	}
}

// follow reads every worker's messages until each has sent its history and
// exited, stopping and continuing the stalled one on the way.
func (s *stallRun) follow(ctx context.Context, ws []*proc, all <-chan fromWorker, deadline <-chan time.Time) ([][]linearizability.Operation, error) {
	parts := make([][]linearizability.Operation, len(ws))
	got := make([]bool, len(ws))
	var cont <-chan time.Time
	for ended := 0; ended < len(ws); {
		select {
		case f := <-all:
			switch {
			case !f.ok:
				ended++
				<-ws[f.i].Exited()
				if !got[f.i] {
					return nil, notRun("worker %d exited without its history: %s", f.i, ws[f.i].status())
				}
			case f.m.Type == msgError:
				return nil, notRun("worker %d stopped at %s: %s", f.i, f.m.Stage, f.m.Error)
			case f.m.Type == msgHistory:
				parts[f.i], got[f.i] = f.m.Ops, true
				if s.opt.Ops != nil {
					s.opt.Ops.Add(int64(len(f.m.Ops)))
				}
			case f.m.Type == msgLocked && f.i == s.res.Stalled:
				inj, err := chaos.StopProcess.Inject(ctx, ws[f.i].Process, nil)
				if err != nil {
					return nil, notRun("%v", err)
				}
				s.heal = inj.Heal
				s.stopAt = time.Since(s.base).Nanoseconds()
				s.fault(fmt.Sprintf("SIGSTOP worker %d holding the write lock", f.i))
				cont = time.After(s.opt.Window)
			}
		case <-cont:
			cont = nil
			if err := s.resume(ctx, ws[s.res.Stalled]); err != nil {
				return nil, err
			}
		case <-deadline:
			return nil, notRun("the workers did not finish within %v", s.opt.Duration+s.opt.Window+stallSlack)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.stopAt == 0 {
		return nil, notRun("the stall was never injected: worker %d did not reach commit %d", s.res.Stalled, s.res.StallAt)
	}
	return parts, nil
}

// resume heals the stall (SIGCONT) and lets the worker's commit go on.
func (s *stallRun) resume(ctx context.Context, w *proc) error {
	if err := s.heal(ctx); err != nil {
		return notRun("%v", err)
	}
	s.contAt = time.Since(s.base).Nanoseconds()
	s.res.Window = time.Duration(s.contAt - s.stopAt)
	s.fault("")
	if err := w.tell(lineRelease); err != nil {
		return notRun("%v", err)
	}
	return nil
}

// workerConfig is worker i's share of the workload.
func (s *stallRun) workerConfig(i int) workerConfig {
	cfg := workerConfig{
		Mode: modeStall, URL: s.opt.URL, Seed: s.opt.Seed, BaseWallNS: s.base.UnixNano(),
		FirstClient: i * s.opt.Clients, Clients: s.opt.Clients, Executions: s.opt.Executions,
		DurationMS: s.opt.Duration.Milliseconds(), OpTimeoutMS: stallOpTimeout.Milliseconds(),
		BusyTimeoutMS: s.opt.BusyTimeout.Milliseconds(),
		LifeMS:        (s.opt.Duration + s.opt.Window + stallSlack).Milliseconds(),
	}
	if i == s.res.Stalled {
		cfg.StallAt = s.res.StallAt
	}
	return cfg
}

// check heals the merged history through the parent's own store, checks it,
// and counts what the stall did to the other workers. Every worker has
// exited by then (follow), so no write of theirs can still land: the
// tables are read once (linearizability.HealEnded).
func (s *stallRun) check(ctx context.Context, store model.Store, parts [][]linearizability.Operation) error {
	meta := linearizability.Meta{TraceMax: model.DefaultTraceMax, Seed: s.opt.Seed, Scenario: "writer-stall", Store: s.opt.URL}
	h, _ := mergeHistories(meta, parts)
	rec := linearizability.NewRecorderAt(store, s.base)
	if err := linearizability.HealEnded(ctx, rec.HealClient(), h); err != nil {
		return notRun("heal reads: %v", err)
	}
	h, source := mergeHistories(meta, append(parts, rec.History().Ops))
	s.res.History = h
	if s.res.ClockStep = clockStep(s.base); s.res.ClockStep.Abs() > maxClockStep {
		return notRun("the wall clock moved %v against the monotonic clock during the run; the processes' times cannot be merged", s.res.ClockStep)
	}
	rep, err := linearizability.Check(ctx, h, linearizability.Options{Timeout: s.opt.CheckTimeout})
	if err != nil {
		return fmt.Errorf("check the merged history: %w", err)
	}
	s.res.Report, s.res.Err = rep, rep.Err
	isolation := s.observe(h, source)
	if s.res.Err == nil {
		s.res.Err = isolation
	}
	return s.save(ctx, rep)
}

// observe counts the other workers' operations that failed or ended
// indeterminate during the stall, and returns ErrIsolation if one of their
// commits succeeded entirely inside it: the stalled worker held the write
// lock all along, so none could.
func (s *stallRun) observe(h linearizability.History, source []int) error {
	var err error
	for i, op := range h.Ops {
		if source[i] == s.res.Stalled || op.Heal {
			continue
		}
		out := op.Output.Outcome
		if (out == linearizability.OutcomeFailed || out == linearizability.OutcomeIndeterminate) && op.Call < s.contAt && returned(op) > s.stopAt {
			s.res.Busy++
		}
		if err == nil && op.Kind.IsCommit() && out == linearizability.OutcomeOK && op.Call > s.stopAt && op.Return < s.contAt {
			err = broke(ErrIsolation, "worker %d's %s of %s succeeded between %v and %v while worker %d was stopped holding the write lock (%v to %v)",
				source[i], op.Kind, op.Execution, time.Duration(op.Call), time.Duration(op.Return), s.res.Stalled, time.Duration(s.stopAt), time.Duration(s.contAt))
		}
	}
	return err
}

// save writes the merged history and, when a check failed, the verdict
// and violations and the visualization to OutDir (an evidence.Folder).
func (s *stallRun) save(ctx context.Context, rep *linearizability.Report) error {
	f := evidence.At(s.opt.OutDir)
	if f.None() {
		return nil
	}
	path, err := f.WriteHistory(s.res.History)
	if err != nil {
		return notRun("save the history: %v", err)
	}
	s.res.Artifacts = append(s.res.Artifacts, path)
	if s.res.Err == nil {
		return nil
	}
	v := evidence.VerdictOf(rep)
	if rep.Err == nil {
		// The isolation check's, which the report does not hold.
		v.Violations = append([]string{s.res.Err.Error()}, v.Violations...)
	}
	if path, err = f.WriteVerdict(v); err != nil {
		return notRun("save the violations: %v", err)
	}
	s.res.Artifacts = append(s.res.Artifacts, path)
	if rep.Verdict == linearizability.Illegal {
		if path, err = f.WriteVisualization(ctx, s.res.History, rep, linearizability.Options{Timeout: s.opt.CheckTimeout}, nil); err != nil {
			return notRun("save the visualization: %v", err)
		}
		s.res.Artifacts = append(s.res.Artifacts, path)
	}
	return nil
}
