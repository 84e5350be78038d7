package procfault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/chaos"
)

// Crash-recovery bounds.
const (
	// DefaultCycles is how many kill-and-recover cycles a run makes unless
	// told otherwise: enough to land kills mid-commit several times, small
	// enough for CI.
	DefaultCycles = 20
	// MaxCycles bounds a run whatever it is told. The tables grow with the
	// cycles (nothing is relayed) and every recovery is dumped and compared
	// whole, so a cycle costs more the more cycles came before it.
	MaxCycles = 1000
	// cycleTimeout bounds one cycle, from the worker's start to its reaping.
	cycleTimeout = time.Minute
	// workerLife bounds a worker that is never killed.
	workerLife = 2 * time.Minute
)

// CrashOptions configure CrashRecovery.
type CrashOptions struct {
	// URL is a sqlite: or libsql: file, or a mutant: with ?path=FILE.
	URL  string
	Seed uint64
	// Cycles is the number of kill-and-recover cycles; 0 means
	// DefaultCycles.
	Cycles int
	// Command starts the workers; see SelfCommand.
	Command Command
	// Synchronous overrides the backend's PRAGMA synchronous (sqlite: and
	// libsql: only); "" keeps the backend's default, NORMAL.
	Synchronous string
	// Ops, when set, counts acknowledged commits as they come.
	Ops *atomic.Int64
	// Fault, when set, is told the fault being injected ("" when none).
	Fault func(string)
}

// CrashResult is what a crash-recovery run found.
type CrashResult struct {
	// Cycles is the number of workers killed and recovered from.
	Cycles int
	// Hooks says whether the workers reported their BeforeCommit hook
	// (sqlite: and libsql:; a mutant has none).
	Hooks bool
	// InFlight counts kills that landed while a commit was called and not
	// acknowledged; MidCommit those of them after its BeforeCommit hook
	// fired (without the hook, after its call); Applied those in-flight
	// commits the recovered store turned out to hold.
	InFlight, MidCommit, Applied int
	// Acked is the number of acknowledged commits, all of them checked
	// after every later crash.
	Acked int
	// CycleTimes are the cycles' wall times (start, recover, verify,
	// commit, kill, reap); RecoveryTimes the workers' open, integrity check
	// and dump.
	CycleTimes, RecoveryTimes []time.Duration
	// CommitLatency is the mean acknowledged commit's call time.
	CommitLatency time.Duration
	// Cycle logs what each cycle did, one line each.
	Cycle []string
	// Err is the first broken guarantee (errors.Is with ErrIntegrity,
	// ErrDurability, ErrAtomicity); nil when every check held.
	Err error
	// Notes are remarks: commits that failed without a fault.
	Notes []string
}

// CrashRecovery runs opt.Cycles cycles on one database file: a worker
// process recovers the file, commits back to back, and is SIGKILLed at a
// seeded moment — often mid-commit — and the next worker's recovered tables
// are checked (see ledger.verify). A last worker only recovers and reports.
// The error is for a run that could not be made (ErrNotRun) or was
// interrupted (the context's error); a broken guarantee is CrashResult.Err.
func CrashRecovery(ctx context.Context, opt CrashOptions) (*CrashResult, error) {
	t, err := target("crash-recovery", opt.URL, CrashNeeds()...)
	if err != nil {
		return nil, err
	}
	cycles := opt.Cycles
	if cycles == 0 {
		cycles = DefaultCycles
	}
	if cycles < 1 || cycles > MaxCycles {
		return nil, notRun("cycles must be 1..%d, got %d", MaxCycles, cycles)
	}
	r := &crashRun{opt: opt, cycles: cycles, res: &CrashResult{Hooks: t.Has(backends.CommitHooks)}, led: newLedger(), lat: initialLatency()}
	defer r.fault("")
	for c := 0; c <= cycles && r.res.Err == nil; c++ {
		if err := r.cycle(ctx, c, c == cycles); err != nil {
			return r.res, interrupted(ctx, err)
		}
	}
	r.res.Notes = append(r.res.Notes, r.led.notes...)
	r.res.Acked = r.led.total
	return r.res, nil
}

// crashRun is one crash-recovery run in progress.
type crashRun struct {
	opt    CrashOptions
	cycles int
	res    *CrashResult
	led    *ledger
	lat    latency
	latSum time.Duration
	latN   int
	// power, when set, cuts the power after every kill (PowerLoss).
	power *powerCut
}

func (r *crashRun) fault(s string) {
	if r.opt.Fault != nil {
		r.opt.Fault(s)
	}
}

// cycle runs worker c: it recovers and the ledger verifies what it found;
// then, unless last, it commits until the plan's kill lands.
func (r *crashRun) cycle(ctx context.Context, c int, last bool) error {
	start := time.Now()
	rng := rand.New(rand.NewPCG(r.opt.Seed, 1<<32+uint64(c)))
	plan := drawPlan(rng, r.res.Hooks, r.lat)
	reset := c == 0
	if r.power != nil && r.power.wipe {
		if err := r.power.wipeFile(); err != nil {
			return err
		}
		reset = true
	}
	cfg := workerConfig{Mode: modeCrash, URL: r.opt.URL, Seed: r.opt.Seed, Cycle: c, Reset: reset,
		MaxCommits: maxCommits, LifeMS: workerLife.Milliseconds(), Synchronous: r.opt.Synchronous}
	if last {
		cfg.Mode = modeVerify
	}
	switch plan.kind {
	case killHeld:
		cfg.HoldAt = plan.commit
	case killRaced:
		cfg.RaceAt = plan.commit
	}
	w, deadline, done, err := startCycle(ctx, r.opt.Command, cfg)
	if err != nil {
		return err
	}
	defer done()
	if err := r.recovered(ctx, w, c, deadline); err != nil || r.res.Err != nil || last {
		return err
	}
	r.fault(fmt.Sprintf("SIGKILL %d/%d: %s", c+1, r.cycles, plan))
	killed, err := r.traffic(ctx, w, plan, deadline)
	if err != nil {
		return err
	}
	r.landed(c, plan, killed, time.Since(start))
	if r.power != nil {
		r.fault(fmt.Sprintf("power cut %d/%d", c+1, r.cycles))
		return r.power.cut(ctx)
	}
	return nil
}

// recovered waits for worker c's recovered tables and verifies them.
func (r *crashRun) recovered(ctx context.Context, w *proc, c int, deadline <-chan time.Time) error {
	m, err := await(ctx, w, msgRecovered, deadline)
	var stopped *workerStopped
	switch {
	case err != nil && c == 0:
		return err // the backend cannot be opened at all
	case errors.As(err, &stopped) && r.power != nil && r.power.rule == keepNothing:
		r.power.recovered(r.led.unexplained(fmt.Sprintf("the database cannot be recovered: %s failed: %s", stopped.stage, stopped.msg), len(r.led.pending)))
		return nil
	case errors.As(err, &stopped):
		r.res.Err = broke(ErrIntegrity, "after crash %d the database cannot be recovered: %s failed: %s", c, stopped.stage, stopped.msg)
		return nil
	case err != nil:
		return err
	}
	r.res.Hooks = m.Hooks
	r.res.RecoveryTimes = append(r.res.RecoveryTimes, time.Duration(m.RecoveryUS)*time.Microsecond)
	inflight := r.led.inflight != nil
	var applied bool
	if r.power != nil {
		var found afterCut
		found, err = r.led.verifyCut(ctx, r.power.rule, m.Integrity, m.Dump)
		applied = found.Applied
		r.power.recovered(found)
	} else {
		applied, err = r.led.verify(ctx, m.Integrity, m.Dump)
	}
	if err != nil {
		what := "crash"
		if r.power != nil {
			what = "power cut"
		}
		r.res.Err = fmt.Errorf("after %s %d: %w", what, c, err)
		return nil
	}
	if inflight && applied {
		r.res.Applied++
	}
	return nil
}

// traffic follows the worker's commits until the plan's kill lands, then
// reads what it wrote before it died. killed is false when the worker
// stopped by itself after a failed commit.
func (r *crashRun) traffic(ctx context.Context, w *proc, plan killPlan, deadline <-chan time.Time) (killed bool, err error) {
	var kill <-chan time.Time
	failed := false // the last message was a failed commit
	for {
		select {
		case m, ok := <-w.events:
			if !ok {
				return false, r.stopped(w, failed)
			}
			r.observe(m)
			failed = m.Type == msgFail
			if kill == nil && plan.trigger(m) {
				if plan.kind == killRaced {
					if err := w.tell(lineGo); err != nil {
						return false, notRun("%v", err)
					}
				}
				kill = time.After(plan.delay)
			}
		case <-kill:
			if _, err := chaos.KillProcess.Inject(ctx, w.Process, nil); err != nil {
				return false, notRun("%v", err)
			}
			for _, m := range w.drain() {
				r.observe(m)
			}
			return true, nil
		case <-deadline:
			return false, notRun("the worker did not reach its kill point (%s) within %v: %s", plan, cycleTimeout, w.status())
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// stopped handles a worker that exited before its kill: after a failed
// commit that is the protocol (the ledger has noted it, and the next
// recovery decides the commit); otherwise the harness broke.
func (r *crashRun) stopped(w *proc, failed bool) error {
	<-w.Exited()
	if failed {
		return nil
	}
	return notRun("the worker exited before it was killed: %s", w.status())
}

// observe passes a message to the ledger and the latency averages.
func (r *crashRun) observe(m message) {
	r.led.observe(m)
	r.lat.observe(m)
	if m.Type == msgAck {
		r.latSum += time.Duration(m.LatencyUS) * time.Microsecond
		r.latN++
		r.res.CommitLatency = r.latSum / time.Duration(r.latN)
		if r.opt.Ops != nil {
			r.opt.Ops.Add(1)
		}
	}
}

// landed counts where cycle c's kill landed.
func (r *crashRun) landed(c int, plan killPlan, killed bool, took time.Duration) {
	r.res.Cycles++
	r.res.CycleTimes = append(r.res.CycleTimes, took)
	where := "killed between commits"
	switch {
	case !killed:
		where = "not killed: the worker stopped after a failed commit"
	case r.led.inflight != nil && r.led.stage == msgPreCommit:
		r.res.InFlight++
		r.res.MidCommit++
		where = "killed after the BeforeCommit hook of commit " + r.led.inflight.token()
	case r.led.inflight != nil:
		r.res.InFlight++
		if !r.res.Hooks { // without the hook, the call is all the parent sees
			r.res.MidCommit++
		}
		where = "killed after the call of commit " + r.led.inflight.token()
	}
	r.res.Cycle = append(r.res.Cycle, fmt.Sprintf("cycle %d: %s; %s; %d commits acknowledged so far; %v",
		c, plan, where, len(r.led.acked), took.Round(time.Millisecond)))
}

// workerStopped is a worker's report that it cannot go on.
type workerStopped struct{ stage, msg string }

func (e *workerStopped) Error() string {
	return fmt.Sprintf("the worker stopped: %s failed: %s", e.stage, e.msg)
}

// await returns w's next message of type want, skipping others. A worker
// that reports an error, exits, or runs past the deadline is a run that
// could not be made (ErrNotRun; a *workerStopped too for a reported error).
func await(ctx context.Context, w *proc, want string, deadline <-chan time.Time) (message, error) {
	for {
		select {
		case m, ok := <-w.events:
			switch {
			case !ok:
				<-w.Exited()
				return message{}, notRun("the worker exited before it said %q: %s", want, w.status())
			case m.Type == msgError:
				return message{}, fmt.Errorf("%w: %w", ErrNotRun, &workerStopped{m.Stage, m.Error})
			case m.Type == want:
				return m, nil
			}
		case <-deadline:
			return message{}, notRun("the worker did not say %q within %v: %s", want, cycleTimeout, w.status())
		case <-ctx.Done():
			return message{}, ctx.Err()
		}
	}
}

// interrupted returns the context's error when ctx has ended, since then
// err is most likely a consequence of the workers being killed for it.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
