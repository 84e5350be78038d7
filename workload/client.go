package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// Per-client memory bounds.
const (
	keepViews  = 4 // views remembered per execution, for stale commits
	keepEvents = 8 // event ids remembered per execution, for re-deliveries
	maxAcks    = 3 // entries a relay acknowledges per step
	maxDeletes = 2 // timers a sweep deletes per step
)

// worker is one client of the run: its recorder client, its generator and
// what it has seen.
type worker struct {
	idx   int
	cfg   *Config
	plan  *plan
	done  int        // steps taken
	rng   *rand.Rand // the current step's own stream
	c     *linearizability.Client
	execs []string

	n      int                 // attempts so far, for tokens
	views  map[string][]view   // per execution, oldest first
	stale  map[string]bool     // the newest view may be outdated
	events map[string][]string // event ids committed, for re-delivery
	due    []model.DueTimer    // what the last sweep saw, for stale deletes
	flying *inflight           // the commits in flight, shared by the clients

	watch *stallWatch // told of each call's start and answer in time; may be nil
}

func newWorker(idx int, cfg *Config, c *linearizability.Client, execs []string, flying *inflight) *worker {
	return &worker{
		idx: idx, cfg: cfg, c: c, execs: execs, plan: newPlan(cfg, idx), flying: flying,
		views: map[string][]view{}, stale: map[string]bool{}, events: map[string][]string{},
	}
}

// run takes the planned steps until they are done or the deadline passes,
// or ctx ends. Store errors are recorded, not returned; the error is a
// harness failure (a call the recorder refused).
func (w *worker) run(ctx context.Context, deadline time.Time) error {
	// A closed gate holds the client no longer than the run's deadline.
	gated, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for i := 0; i < w.plan.steps && ctx.Err() == nil && time.Now().Before(deadline); i++ {
		if w.cfg.Gate != nil {
			w.cfg.Gate.Wait(gated)
			if ctx.Err() != nil || !time.Now().Before(deadline) {
				break
			}
		}
		err := w.step(ctx, i)
		w.done++
		if errors.Is(err, linearizability.ErrNotRecorded) {
			return fmt.Errorf("client %d: %w", w.idx, err)
		}
		if w.cfg.Progress != nil {
			w.cfg.Progress.Add(1)
		}
	}
	return nil
}

// step runs step i of the plan: its kind and execution come from the plan,
// every other random choice from a stream of its own, so that what one
// step happened to see never shifts what a later step draws.
func (w *worker) step(ctx context.Context, i int) error {
	kind, exec := w.plan.at(i)
	w.rng = w.plan.rngFor(i)
	steps := []func(context.Context, string) error{
		w.commit, w.staleCommit, w.save, w.deliver, w.load, w.loadForEvent,
		w.isProcessed, w.readTrace, w.appendTrace, w.relay, w.spawnRelay, w.sweep,
	}
	return steps[kind](ctx, w.execs[exec])
}

// op returns the context of one store call that reads, and its cancel, to
// be called as the call ends: a call that ended before its context did is
// an answer.
func (w *worker) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return w.call(ctx, false)
}

// writeOp is op for a call that changes the store (commit, save, append,
// ack, delete): the stall watch also stops traffic whose writes alone go
// unanswered.
func (w *worker) writeOp(ctx context.Context) (context.Context, context.CancelFunc) {
	return w.call(ctx, true)
}

func (w *worker) call(ctx context.Context, write bool) (context.Context, context.CancelFunc) {
	octx, cancel := context.WithTimeout(ctx, w.cfg.OpTimeout)
	if w.watch == nil {
		return octx, cancel
	}
	w.watch.begun(write)
	return octx, func() {
		w.watch.ended(write, octx.Err() == nil)
		cancel()
	}
}

// token starts a new attempt.
func (w *worker) token() string {
	w.n++
	return fmt.Sprintf("c%d-%d", w.idx, w.n)
}

// current returns the newest view of exec, loading first when there is none
// or it may be outdated.
func (w *worker) current(ctx context.Context, exec string) (view, error) {
	vs := w.views[exec]
	if len(vs) > 0 && !w.stale[exec] {
		return vs[len(vs)-1], nil
	}
	if err := w.load(ctx, exec); err != nil {
		return view{}, err
	}
	if vs = w.views[exec]; len(vs) > 0 {
		return vs[len(vs)-1], nil
	}
	return view{}, nil // absent: create it
}

// learn records a view of exec.
func (w *worker) learn(exec string, v view) {
	vs := w.views[exec]
	if n := len(vs); n == 0 || vs[n-1] != v {
		vs = append(vs, v)
	}
	if len(vs) > keepViews {
		vs = vs[len(vs)-keepViews:]
	}
	w.views[exec], w.stale[exec] = vs, false
}

// committed updates what the client knows after a commit from v.
func (w *worker) committed(exec string, from view, token string, err error) {
	if err == nil {
		w.learn(exec, view{from.version + 1, token})
		return
	}
	w.stale[exec] = true // a conflict, or an outcome unknown: reload first
}

func (w *worker) commit(ctx context.Context, exec string) error {
	from, err := w.current(ctx, exec)
	if err != nil {
		return err
	}
	return w.commitFrom(ctx, exec, from, nil)
}

// staleCommit commits from the oldest view remembered: it should conflict,
// and must not win unless that view is still current.
func (w *worker) staleCommit(ctx context.Context, exec string) error {
	vs := w.views[exec]
	if len(vs) == 0 {
		return w.commitFrom(ctx, exec, view{}, nil) // a create that likely conflicts
	}
	return w.commitFrom(ctx, exec, vs[0], nil)
}

// commitFrom commits a new execution on top of from. event, when set, is
// the processed event id; otherwise the batch may carry a fresh one.
func (w *worker) commitFrom(ctx context.Context, exec string, from view, event *string) error {
	token := w.token()
	exe := newExecution(exec, token, from, w.rng)
	b := newBatch(w.idx, w.n, token, w.execs, w.rng)
	if event != nil {
		b.ProcessedEventID = event
	}
	if b.ProcessedEventID != nil {
		w.remember(exec, *b.ProcessedEventID)
	}
	octx, cancel := w.writeOp(ctx)
	defer cancel()
	end := func(bool) {}
	if b.ProcessedEventID != nil {
		end = w.flying.begin(exec, *b.ProcessedEventID, w.idx)
	}
	err := w.c.Commit(octx, exe, b)
	end(err == nil)
	w.committed(exec, from, token, err)
	w.acked(err)
	return err
}

// acked tells Config.OnAck of an acknowledged write.
func (w *worker) acked(err error) {
	if err == nil && w.cfg.OnAck != nil {
		w.cfg.OnAck()
	}
}

func (w *worker) save(ctx context.Context, exec string) error {
	from, err := w.current(ctx, exec)
	if err != nil {
		return err
	}
	token := w.token()
	octx, cancel := w.writeOp(ctx)
	defer cancel()
	err = w.c.Save(octx, newExecution(exec, token, from, w.rng))
	w.committed(exec, from, token, err)
	w.acked(err)
	return err
}

// remember keeps an event id for later re-delivery.
func (w *worker) remember(exec, event string) {
	ev := append(w.events[exec], event)
	if len(ev) > keepEvents {
		ev = ev[len(ev)-keepEvents:]
	}
	w.events[exec] = ev
}

// eventID picks an event to deliver or probe: a fresh one, or one this
// client committed before (a re-delivery), or now and then that one's id
// in upper case — another event, since ids are compared exactly: a store
// whose ledger ignores case would call it processed.
func (w *worker) eventID(exec string) string {
	if ev := w.events[exec]; len(ev) > 0 && w.rng.IntN(3) == 0 {
		id := ev[w.rng.IntN(len(ev))]
		if w.rng.IntN(4) == 0 {
			return strings.ToUpper(id)
		}
		return id
	}
	return w.token() + "/p"
}

// deliver is an engine handling one event: load_for_event, then, unless the
// event is already processed, commit with it from the version loaded.
func (w *worker) deliver(ctx context.Context, exec string) error {
	event := w.eventID(exec)
	octx, cancel := w.op(ctx)
	exe, done, err := w.c.LoadForEvent(octx, exec, event)
	cancel()
	if err != nil || done {
		return err
	}
	from := view{}
	if exe != nil {
		from = view{exe.Version, tokenOf(exe)}
		w.learn(exec, from)
	}
	return w.commitFrom(ctx, exec, from, &event)
}

func (w *worker) load(ctx context.Context, exec string) error {
	octx, cancel := w.op(ctx)
	defer cancel()
	exe, err := w.c.Load(octx, exec)
	if err == nil && exe != nil {
		w.learn(exec, view{exe.Version, tokenOf(exe)})
	}
	if err == nil && exe == nil {
		w.views[exec], w.stale[exec] = nil, false
	}
	return err
}

// probeWait bounds how long a load_for_event probe waits for a commit to
// be in flight on its execution; a few probes per client and second, so it
// costs little traffic.
const probeWait = 3 * time.Millisecond

// loadForEvent probes an event: the event of a commit another client has
// in flight on exec, when there is one (a reader inside a commit must see
// all of it or nothing), else one of this client's.
func (w *worker) loadForEvent(ctx context.Context, exec string) error {
	event := w.eventID(exec)
	if e := w.flying.await(exec, probeWait); e != "" {
		event = e
	}
	octx, cancel := w.op(ctx)
	defer cancel()
	_, _, err := w.c.LoadForEvent(octx, exec, event)
	return err
}

// isProcessed asks about an event: that of the next commit another client
// acknowledges on exec (waiting up to probeWait), else of the last one
// acknowledged, else that of a commit in flight there, else one of this
// client's. When the store says it is processed,
// the engine loads the execution to act on it: the row must be at least
// the version that processed the event (a reader whose marker comes from a
// fresher copy than its rows, a replica that answers is_processed on the
// primary say, shows it older).
func (w *worker) isProcessed(ctx context.Context, exec string) error {
	event := w.eventID(exec)
	if e := w.flying.awaitAcked(exec, w.idx, probeWait); e != "" {
		event = e
	} else if e := w.flying.await(exec, probeWait); e != "" {
		event = e
	}
	octx, cancel := w.op(ctx)
	done, err := w.c.IsProcessed(octx, exec, event)
	cancel()
	if err != nil || !done {
		return err
	}
	return w.load(ctx, exec)
}

func (w *worker) readTrace(ctx context.Context, exec string) error {
	octx, cancel := w.op(ctx)
	defer cancel()
	_, err := w.c.ReadTrace(octx, exec)
	return err
}

func (w *worker) appendTrace(ctx context.Context, exec string) error {
	octx, cancel := w.writeOp(ctx)
	defer cancel()
	return w.c.AppendTrace(octx, exec, traceEntry(w.token(), "append"))
}
