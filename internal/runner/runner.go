// Package runner executes a plan of runs — each one backend × one
// scenario, with its seed — each in its own folder, and collects the
// summary every report is rendered from. run, qualify, replay and mutants
// all go through it.
package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/internal/knownissues"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/scenarios"
)

// DirPlaceholder in an entry's backend URL is replaced by a folder made
// for the run: a fresh database file per run. The folder is the run's
// folder's StoreFolder, kept with the run's evidence, when the plan keeps
// stores (Plan.KeepStores); otherwise a temporary folder, removed after
// the run.
const DirPlaceholder = "{dir}"

// StoreFolder is the folder, in a run's folder, that stands for
// DirPlaceholder when the plan keeps stores.
const StoreFolder = "db"

// Entry is one run of a plan.
type Entry struct {
	// Backend is the backend URL, perhaps with DirPlaceholder.
	Backend  string
	Scenario scenarios.Scenario
	Seed     uint64
	// Subject names what the run checks where the URL does not say it
	// (a mutant of the catalogue); "" otherwise.
	Subject string
	// Index is the entry's position (from 1) in the whole plan when the
	// plan is a shard of it (Plan.Shard); 0 means its place in Entries.
	Index int
}

// Plan is what to run.
type Plan struct {
	Entries []Entry
	// Params are the scenarios' knobs; each run's Seed and OutDir are set
	// from its entry.
	Params scenarios.Params
	// Out is the output folder; each run's folder is Out/runs/NN-…. ""
	// keeps nothing.
	Out string
	// Shard, when set, says the entries are one shard of a larger plan
	// (see Shard); the summary records it and each run's Index.
	Shard *reports.Shard
	// Reproduce renders the command line that repeats one run.
	Reproduce func(seed uint64, backend, scenario string) string
	// Options are recorded with every run, for replay.
	Options map[string]string
	// Budget bounds each run; 0 means none. A run stopped by it is NOT
	// RUN, unless it had found a failure.
	Budget time.Duration
	// Skip, when set, is asked before each run, with the runs of the same
	// subject, or else the same backend URL, that ended before it began, in
	// plan order (see Execute); a reason skips it (NOT RUN with that
	// reason).
	Skip func(done []reports.Run, e Entry) string
	// Instrument, when set, wraps every store run i opens.
	Instrument func(i int, st model.Store) model.Store
	// TempDir is where DirPlaceholder folders are made when they are not
	// kept; "" means the system's.
	TempDir string
	// KeepStores makes each run's DirPlaceholder folder the StoreFolder of
	// its run folder, left there with the run's evidence (a plan without
	// Out has no run folders: its stores are removed as without it).
	KeepStores bool
	// Parallel is how many runs may go at once (Execute); 0 or 1 runs
	// them one after another.
	Parallel int
	// TimedCores is how many cores the timed runs going at once may keep
	// busy (each run's from its backend, see footprint), when Parallel is
	// above 1: a timed run
	// starts when it fits beside those going, or when none is going. 0 or
	// 1 runs them one after another (none fits beside another). The
	// commands make it the machine's cores (see Execute).
	TimedCores int
	// InProcessOvercommit, above 1, lets timed runs on in-process stores
	// (backends.Target.InProcess) keep that many times TimedCores busy
	// while every run going beside them is in-process too: a run of a
	// server, whose heartbeats and elections a starved core can trip, still
	// never goes where more than TimedCores are busy. 0 or 1 is no
	// overcommit. The commands set it from a measurement (see Execute).
	InProcessOvercommit float64
}

// Inspectable is url with DirPlaceholder standing for an existing folder,
// so that it can be validated and its capabilities read before any run
// has a folder of its own: neither depends on which folder it gets.
// The system's temporary folder stands in when it exists, else the
// working folder: a $TMPDIR that names nothing must not refuse a URL whose
// runs get folders of their own elsewhere.
func Inspectable(url string) string {
	standIn := os.TempDir()
	if fi, err := os.Stat(standIn); err != nil || !fi.IsDir() {
		if wd, err := os.Getwd(); err == nil {
			standIn = wd
		}
	}
	return strings.ReplaceAll(url, DirPlaceholder, standIn)
}

// Matrix is the entries of backends × scenarios, all with seed. With
// onlyApplicable the pairs whose scenario does not apply to the backend
// are left out ("every scenario that applies"); without it they stay, and
// run as NOT RUN with the reason (a scenario asked for by name).
func Matrix(backendURLs []string, scs []scenarios.Scenario, seed uint64, onlyApplicable bool) []Entry {
	var out []Entry
	for _, b := range backendURLs {
		t, err := scenarios.TargetFor(Inspectable(b))
		for _, sc := range scs {
			if onlyApplicable && err == nil {
				if ok, _ := sc.Applies(t.Target); !ok {
					continue
				}
			}
			out = append(out, Entry{Backend: b, Scenario: sc, Seed: seed})
		}
	}
	return out
}

// ShardOf keeps the entries of shard K of N of a plan, numbering each by
// its position in the whole plan.
func ShardOf(entries []Entry, s reports.Shard) []Entry {
	var out []Entry
	for i, e := range entries {
		if s.Holds(i + 1) {
			e.Index = i + 1
			out = append(out, e)
		}
	}
	return out
}

// PlanDigest identifies a whole plan, for telling its shards from another
// plan's: every entry in order (backend URL with its secrets redacted,
// subject, scenario, seed) and the options that change what the runs do,
// in key order, hashed with SHA-256 (hex). The output folder out and how
// many runs go at once are not in it: they change where and how fast, not
// what runs; a backend path under out counts as the same path under any
// shard's output folder (storecheck merge rewrites it so).
func PlanDigest(entries []Entry, options map[string]string, out string) string {
	h := sha256.New()
	for _, e := range entries {
		backend := reports.OutRelative(e.Backend, out)
		fmt.Fprintf(h, "run %q %q %q %d\n", reports.Redact(backend), e.Subject, e.Scenario.Name, e.Seed)
	}
	for _, k := range slices.Sorted(maps.Keys(options)) {
		fmt.Fprintf(h, "option %q %q\n", k, options[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Progress receives one call when a run starts, with the counters the run
// updates as it goes, and one when it ends.
type Progress interface {
	Started(backend, scenario string, live *scenarios.Progress)
	Finished(r reports.Run)
}

// Execute runs every entry of the plan and returns the summary, its runs
// in plan order. Runs after an interruption are recorded INTERRUPTED
// without starting, so the summary always lists the whole plan.
//
// With plan.Parallel above 1, runs go side by side, under two rules. Runs
// of one lane — one backend URL, or one catalogue subject — go one after
// another in plan order: they may share a database file, and Skip reads
// the lane's earlier runs; a run that shares nothing with the others of its
// backend (a fresh folder, a cluster of its own: see footprint) is a lane
// of its own. And runs whose scenario is Timed (their verdicts or figures
// hang on timing: faults, replica lag, crashes, stalls) go after all the
// others, side by side only while the cores they keep busy fit in
// plan.TimedCores: the commands set it to the machine's cores, so
// that each timed run of a server has the cores it keeps busy alone
// (docs/PERFORMANCE.md: two timed runs of rqlite clusters on two cores lost
// a detection the run alone made), and never shares the machine with an
// untimed run. Timed runs on in-process stores may go further, to
// plan.InProcessOvercommit times those cores, while only in-process runs
// go beside them: alone, each leaves part of its core idle on fsyncs and
// pauses (docs/PERFORMANCE.md). Only the order of execution changes; what
// each run does and reports does not.
func Execute(ctx context.Context, plan Plan, progress Progress) *reports.Summary {
	par := &reports.Parallel{Runs: max(1, plan.Parallel), TimedCores: plan.timedCores()}
	if c := plan.inProcessCores(); c > float64(par.TimedCores) {
		par.InProcessCores = c
	}
	sum := &reports.Summary{Shard: plan.Shard, Parallel: par}
	// The summary's seed is the first run's; a plan without runs (a shard
	// of a plan smaller than its shard count) records the plan's own, so
	// that its summary still says which plan it belongs to.
	sum.Seed = plan.Params.Seed
	if len(plan.Entries) > 0 {
		sum.Seed = plan.Entries[0].Seed
	}
	// The runs folder is the plan's own: artifacts of an earlier run must not
	// be read as this one's.
	if plan.Out != "" {
		_ = os.RemoveAll(filepath.Join(plan.Out, "runs"))
	}
	x := &execution{plan: plan, progress: progress, runs: make([]reports.Run, len(plan.Entries)),
		spans: make([]span, len(plan.Entries)), done: map[string][]reports.Run{}}
	if plan.Parallel <= 1 {
		for i := range plan.Entries {
			x.run(ctx, i)
		}
	} else {
		x.parallel(ctx)
	}
	x.noteNeighbours() // none, when the runs went one at a time
	sum.Runs = x.runs
	return sum
}

// span is when a run's scenario ran; zero, overlapping nothing, for a run
// that ended before its scenario started (NOT RUN, interrupted).
type span struct{ start, end time.Time }

// noteNeighbours records in each run that ran the positions of the runs
// that ran at some time beside it (reports.Run.Beside): a run's figures,
// and under a tight schedule its catches, are those of a run that shared
// the machine with them.
func (x *execution) noteNeighbours() {
	for i, a := range x.spans {
		for j, b := range x.spans {
			if j != i && b.start.Before(a.end) && a.start.Before(b.end) {
				x.runs[i].Beside = append(x.runs[i].Beside, x.position(j))
			}
		}
	}
}

// position is entry i's place (from 1) in the whole plan: the number its
// run folder carries.
func (x *execution) position(i int) int {
	if e := x.plan.Entries[i]; e.Index > 0 {
		return e.Index
	}
	return i + 1
}

// execution is one Execute: the runs so far, in plan order and by lane.
type execution struct {
	plan     Plan
	progress Progress

	mu    sync.Mutex // runs, spans, done and the calls to progress
	runs  []reports.Run
	spans []span                   // when each run's scenario ran
	done  map[string][]reports.Run // by subject or backend (what Skip reads), in plan order
}

// footprint is what scheduling needs to know of an entry, read from its
// backend URL and scenario (footprintOf).
type footprint struct {
	// own says its runs share no state: the URL holds DirPlaceholder, a
	// fresh folder per run, or the backend starts every store from
	// nothing (backends.Target.Fresh).
	own bool
	// cores is how many cores the run keeps busy: the backend's
	// (backends.Target.Cores), or the scenario's where it waits more than
	// it works (Scenario.CoresOn).
	cores float64
	// inProcess says no server runs beside its stores
	// (backends.Target.InProcess): it may go where its cores are
	// overcommitted (Plan.InProcessOvercommit).
	inProcess bool
}

// footprintOf reads e's footprint. A URL that does not resolve counts as
// shared, one core and not in-process: its run ends NOT RUN at once.
func footprintOf(e Entry) footprint {
	own := strings.Contains(e.Backend, DirPlaceholder)
	t, err := scenarios.TargetFor(Inspectable(e.Backend))
	if err != nil {
		return footprint{own: own, cores: 1}
	}
	return footprint{own: own || t.Target.Fresh, cores: e.Scenario.CoresOn(t.Target), inProcess: t.Target.InProcess}
}

// lane is the key of the runs that must go one after another: one
// subject's, one backend URL's, or, for a run of its own (own, from
// footprint), the run alone.
func lane(i int, e Entry, own bool) string {
	if own && e.Subject == "" {
		return fmt.Sprintf("run %d", i)
	}
	return kin(e)
}

// kin is the key of the runs Skip is shown: those of the same subject, or
// of the same backend URL.
func kin(e Entry) string {
	if e.Subject != "" {
		return "subject " + e.Subject
	}
	return "backend " + e.Backend
}

// parallel runs the untimed runs' lanes on plan.Parallel workers, each
// lane holding one core of the budget (plan.TimedCores) while it runs; once
// every untimed lane has started, the timed runs, a lane each, each run
// when the cores it keeps busy fit beside those going — the last untimed
// runs' included — and never beside an untimed run of its own lane (one
// backend's file).
func (x *execution) parallel(ctx context.Context) {
	own := make([]bool, len(x.plan.Entries))
	demands := make([]demand, len(x.plan.Entries))
	for i, e := range x.plan.Entries {
		fp := footprintOf(e)
		own[i], demands[i] = fp.own, x.plan.demandOf(fp)
	}
	key := func(l []int) string { return lane(l[0], x.plan.Entries[l[0]], own[l[0]]) }
	untimed, timed := x.lanes(false, own), x.lanes(true, own)
	budget := newCoreBudget()
	untimedEnd := map[string]chan struct{}{} // closed when the lane's untimed runs have ended
	for _, l := range untimed {
		untimedEnd[key(l)] = make(chan struct{})
	}
	work := make(chan []int)
	var wg sync.WaitGroup
	for range min(x.plan.Parallel, len(untimed)) {
		wg.Go(func() {
			for l := range work {
				for _, i := range l {
					x.run(ctx, i)
				}
				budget.give(untimedDemand())
				close(untimedEnd[key(l)])
			}
		})
	}
	for _, l := range untimed {
		// Counted before it goes, whether or not it fits: --parallel, not
		// the budget, says how many untimed runs go at once.
		budget.hold(untimedDemand())
		work <- l
	}
	close(work)
	x.runLanes(ctx, longestFirst(x.plan.Entries, timed), budget, demands, func(l []int) <-chan struct{} {
		return untimedEnd[key(l)] // nil for a lane with no untimed runs
	})
	wg.Wait()
}

// longestFirst orders lanes by the expected length of their first run
// (Scenario.Length), longest first, plan order among equals.
func longestFirst(entries []Entry, lanes [][]int) [][]int {
	out := slices.Clone(lanes)
	slices.SortStableFunc(out, func(a, b []int) int {
		return cmp.Compare(entries[b[0]].Scenario.Length, entries[a[0]].Scenario.Length)
	})
	return out
}

// timedCores is the cores timed runs may keep busy at once: TimedCores,
// never above Parallel, at least 1.
func (p Plan) timedCores() int { return max(1, min(p.Parallel, p.TimedCores)) }

// inProcessCores is the cores timed runs on in-process stores may keep
// busy at once among themselves: timedCores, overcommitted by
// InProcessOvercommit when that is above 1.
func (p Plan) inProcessCores() float64 {
	return float64(p.timedCores()) * max(1, p.InProcessOvercommit)
}

// demandOf is what a timed run of footprint fp takes from the budget: its
// cores, and the most cores that may be busy while it goes — the plan's
// timed cores, or for an in-process store the overcommitted ones.
func (p Plan) demandOf(fp footprint) demand {
	ceiling := float64(p.timedCores())
	if fp.inProcess {
		ceiling = p.inProcessCores()
	}
	return demand{cores: fp.cores, ceiling: ceiling}
}

// untimedDemand is what an untimed run holds while it goes: one core, and
// no ceiling of its own (its verdict does not hang on timing).
func untimedDemand() demand { return demand{cores: 1, ceiling: math.Inf(1)} }

// lanes groups the plan's timed (or untimed) entries by lane, lanes in
// the order of their first entry, each lane's entries in plan order.
func (x *execution) lanes(timed bool, own []bool) [][]int {
	var out [][]int
	at := map[string]int{}
	for i, e := range x.plan.Entries {
		if e.Scenario.Timed != timed {
			continue
		}
		k := lane(i, e, own[i])
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], i)
	}
	return out
}

// runLanes runs the lanes side by side, each lane's runs one after
// another once after(lane) is closed (nil: at once), each run when its
// cores fit in budget and no run of a lane before it that fits is
// waiting, and returns when all have ended.
func (x *execution) runLanes(ctx context.Context, lanes [][]int, budget *coreBudget, demands []demand, after func(lane []int) <-chan struct{}) {
	var wg sync.WaitGroup
	for rank, l := range lanes {
		// Every lane's first run is queued before any goes, so that the
		// first to go is the first by rank, not the first goroutine up.
		dep := after(l)
		first := budget.enqueue(rank, demands[l[0]], isClosed(dep))
		wg.Go(func() {
			if dep != nil {
				<-dep
			}
			for j, i := range l {
				w := first
				if j > 0 {
					w = budget.enqueue(rank, demands[i], true)
				}
				budget.await(w)
				x.run(ctx, i)
				budget.give(demands[i])
			}
		})
	}
	wg.Wait()
}

// isClosed reports whether c is nil or closed.
func isClosed(c <-chan struct{}) bool {
	if c == nil {
		return true
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// coreBudget lets runs go side by side while the cores they keep busy fit
// under the ceiling of every run going and of the run that would join
// them; a run that does not fit even alone goes alone. Of the runs
// waiting, the first by rank that fits goes first.
type coreBudget struct {
	mu       sync.Mutex
	freed    *sync.Cond
	used     float64
	going    int
	ceilings map[float64]int // of the runs going: how many have each
	waiting  map[*waiter]bool
}

// demand is what a run takes from the budget: the cores it keeps busy, and
// the most cores that may be busy, its own included, while it goes.
type demand struct{ cores, ceiling float64 }

// waiter is a run waiting for cores; one not ready waits for something
// else first and is passed over.
type waiter struct {
	rank  int
	d     demand
	ready bool
}

func newCoreBudget() *coreBudget {
	b := &coreBudget{ceilings: map[float64]int{}, waiting: map[*waiter]bool{}}
	b.freed = sync.NewCond(&b.mu)
	return b
}

// enqueue queues a run of the given rank for cores.
func (b *coreBudget) enqueue(rank int, d demand, ready bool) *waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := &waiter{rank: rank, d: d, ready: ready}
	b.waiting[w] = true
	return w
}

// await waits until w's demand fits beside the runs going (or none is
// going) and no ready waiter of a lower rank fits, and takes it.
func (b *coreBudget) await(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.ready = true
	for !b.fits(w.d) || b.beforeFits(w) {
		b.freed.Wait()
	}
	delete(b.waiting, w)
	b.take(w.d)
	b.freed.Broadcast() // a waiter of a higher rank may be next
}

// fits reports whether d fits beside the runs going: the cores busy with
// it stay under its ceiling and under every going run's.
func (b *coreBudget) fits(d demand) bool {
	if b.going == 0 {
		return true
	}
	busy := b.used + d.cores
	if busy > d.ceiling {
		return false
	}
	for c := range b.ceilings {
		if busy > c {
			return false
		}
	}
	return true
}

// beforeFits reports whether a waiter of a lower rank than w fits.
func (b *coreBudget) beforeFits(w *waiter) bool {
	for o := range b.waiting {
		if o.ready && o.rank < w.rank && b.fits(o.d) {
			return true
		}
	}
	return false
}

// hold takes d at once, whether or not it fits.
func (b *coreBudget) hold(d demand) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.take(d)
}

// take counts d as going; the caller holds mu.
func (b *coreBudget) take(d demand) {
	b.used += d.cores
	b.going++
	b.ceilings[d.ceiling]++
}

// give returns what await or hold took.
func (b *coreBudget) give(d demand) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= d.cores
	b.going--
	if b.ceilings[d.ceiling]--; b.ceilings[d.ceiling] == 0 {
		delete(b.ceilings, d.ceiling)
	}
	b.freed.Broadcast()
}

// run executes entry i and files its result.
func (x *execution) run(ctx context.Context, i int) {
	e := x.plan.Entries[i]
	live := &scenarios.Progress{}
	x.mu.Lock()
	if ctx.Err() == nil {
		// After an interrupt runOne starts nothing: no "started" for it.
		x.progress.Started(reports.Redact(e.Backend), e.Scenario.Name, live)
	}
	done := append([]reports.Run(nil), x.done[kin(e)]...)
	x.mu.Unlock()
	n := x.position(i) // the run's folder is named as in the whole plan
	r, sp := runOne(ctx, x.plan, n, e, done, live)
	// A reason may quote the URL as given (an adapter's command line, an
	// error naming a parameter): no secret of it goes further. The backend
	// stays as runOne showed it (redacted): progress knows the run by it.
	r = reports.ScrubRun(r, e.Backend)
	if x.plan.Shard != nil {
		r.Index = n
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.runs[i], x.spans[i] = r, sp
	x.done[kin(e)] = append(x.done[kin(e)], r)
	x.progress.Finished(r)
}

func runOne(ctx context.Context, plan Plan, i int, e Entry, done []reports.Run, live *scenarios.Progress) (reports.Run, span) {
	// A fresh folder's URL is shown as given: the form that repeats the run
	// on fresh files again.
	shown := reports.Redact(e.Backend)
	r := reports.Run{
		Backend: shown, Scenario: e.Scenario.Name, Seed: e.Seed, Subject: e.Subject, Options: plan.Options,
	}
	if plan.Reproduce != nil {
		r.Reproduce = plan.Reproduce(e.Seed, shown, e.Scenario.Name)
	}
	if ctx.Err() != nil {
		r.Verdict, r.Reason = reports.Interrupted, "not started: the run was interrupted"
		return r, span{}
	}
	if plan.Skip != nil {
		if why := plan.Skip(done, e); why != "" {
			r.Verdict, r.Reason = reports.NotRun, why
			return r, span{}
		}
	}
	// Whether the scenario applies does not hang on the folder {dir} gets;
	// a run that will not go makes no folder.
	if probe, err := scenarios.TargetFor(Inspectable(e.Backend)); err != nil {
		r.Verdict, r.Reason = reports.NotRun, err.Error()
		return r, span{}
	} else if ok, why := e.Scenario.Applies(probe.Target); !ok {
		r.Verdict, r.Reason, r.NotApplicable = reports.NotRun, "scenario does not apply: "+why, true
		return r, span{}
	}
	params := plan.Params
	params.Seed, params.Progress = e.Seed, live
	if plan.Out != "" {
		r.Dir = filepath.Join("runs", fmt.Sprintf("%02d-%s-%s", i, slug(folderName(e, shown)), e.Scenario.Name))
		params.OutDir = filepath.Join(plan.Out, r.Dir)
		if err := os.MkdirAll(params.OutDir, 0o755); err != nil {
			r.Verdict, r.Reason = reports.NotRun, fmt.Sprintf("cannot create the run folder: %v", err)
			return r, span{}
		}
	}
	backend, cleanup, err := materialize(e.Backend, plan.TempDir, plan.KeepStores, params.OutDir)
	if err != nil {
		r.Verdict, r.Reason = reports.NotRun, err.Error()
		return r, span{}
	}
	defer cleanup()
	target, err := scenarios.TargetFor(backend)
	if err != nil {
		r.Verdict, r.Reason = reports.NotRun, err.Error()
		return r, span{}
	}
	if params.Logger == nil {
		params.Logger = slog.New(slog.DiscardHandler)
	}
	if plan.Instrument != nil {
		target.Opener = func(ctx context.Context, url string, cfg model.Config) (model.Store, error) {
			// url, not target's: a scenario may open a rewritten URL
			// (snapshotOften gives rqlited a snapshot threshold).
			st, err := backends.Open(ctx, url, cfg)
			if err != nil {
				return nil, err
			}
			return plan.Instrument(i, st), nil
		}
	}
	rctx := ctx
	if plan.Budget > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, plan.Budget)
		defer cancel()
	}
	sp := span{start: time.Now()}
	res := e.Scenario.Run(rctx, target, params)
	sp.end = time.Now()
	r.DurationMS = sp.end.Sub(sp.start).Milliseconds()
	r.Verdict, r.Reason, r.Guarantee = res.Verdict, res.Reason, res.Guarantee
	r.Ops, r.Cases, r.MinimalSteps, r.Metrics = res.Ops, res.Cases, res.MinimalSteps, res.Metrics
	r.SequenceDigest, r.Servers = res.Digest, res.Servers
	if res.Measured != nil {
		res.Measured.Fill(&r)
	}
	if r.Verdict == reports.Fail {
		if is := knownissues.Match(target.Scheme, e.Scenario.Name, r.Guarantee, params.OutDir); is != nil {
			r.KnownIssue = is.ID
		}
	}
	switch {
	case r.Verdict == reports.Pass && r.Ops == 0:
		// A check that ran nothing proved nothing: never a pass.
		r.Verdict, r.Reason = reports.NotRun, "the scenario reported success but ran no operation"
	case ctx.Err() == nil && rctx.Err() != nil && r.Verdict != reports.Fail:
		r.Verdict, r.Reason = reports.NotRun, fmt.Sprintf("over the budget of %v: %s", plan.Budget, r.Reason)
	case ctx.Err() != nil && r.Verdict == reports.Pass:
		// A pass decided after the interruption still holds, but anything
		// the scenario did not finish must not read as PASS.
		r.Reason = "interrupted after the checks completed"
	}
	if ctx.Err() != nil && r.Verdict == reports.NotRun {
		// The interrupt, not the backend, is why it did not run (an open
		// abandoned with the context): a backend that could not be
		// started is not shown for it.
		r.Verdict, r.Reason = reports.Interrupted, "interrupted: "+r.Reason
	}
	return r, sp
}

// folderName is what a run's folder is named after: its subject, or the
// backend as shown.
func folderName(e Entry, shown string) string {
	if e.Subject != "" {
		return e.Subject
	}
	return shown
}

// materialize replaces DirPlaceholder in url with a fresh folder and
// returns how to remove it: the run folder's StoreFolder, emptied first
// and kept, when keep and the run has a folder; otherwise a temporary
// folder in tempDir, removed (and, if this process is killed before it
// can remove it, by the next run's: backends.MkdirTemp).
func materialize(url, tempDir string, keep bool, runDir string) (string, func(), error) {
	if !strings.Contains(url, DirPlaceholder) {
		return url, func() {}, nil
	}
	if keep && runDir != "" {
		dir := filepath.Join(runDir, StoreFolder)
		if err := os.RemoveAll(dir); err != nil {
			return "", nil, fmt.Errorf("cannot empty the database folder %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("cannot create the database folder %s: %w", dir, err)
		}
		return strings.ReplaceAll(url, DirPlaceholder, dir), func() {}, nil
	}
	dir, err := backends.MkdirTemp(tempDir, "storecheck-run-")
	if err != nil {
		return "", nil, fmt.Errorf("cannot create a database folder: %w", err)
	}
	return strings.ReplaceAll(url, DirPlaceholder, dir), func() { os.RemoveAll(dir) }, nil
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9]+`)

// slug turns a backend URL or a name into a short folder-name part.
func slug(s string) string {
	s = strings.Trim(unsafe.ReplaceAllString(s, "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "backend"
	}
	return s
}
