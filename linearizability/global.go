package linearizability

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
)

// The global checks read the final tables (the heal reads) together with the
// whole history. Witnesses make every stored row name the one attempt that
// wrote it: a commit's data carries its token and the token it believes sits
// at the version it commits from; its emits, spawns, timer fire_at values
// and trace entry are unique to it. Then, per execution:
//
//   - the winners are the chain of prev links from the final row down to
//     version 1, exactly (final version) commits, each committed from the
//     version below it (chain.go);
//   - an ok commit outside the chain is a lost update; a conflict or a
//     not-applied failure inside it is an atomicity break; an indeterminate
//     commit is decided by the chain, and its side-writes must follow;
//   - every row of every table must belong to a winner (queue.go, rows.go);
//   - the queue and due_timers reads must show what real time requires:
//     a winner's row from when it took effect (its commit returned, or
//     a read showed its version or one of its rows: observations.go)
//     until its removal
//     (ack, cancel, re-arm, delete) may have been called, and no row
//     after its removal returned (queue.go, rows.go). These read checks
//     run without heal reads too, as far as the witnesses alone allow.

// owner is an attempt and the position of one of its side-writes.
type owner struct {
	op *Operation
	i  int
}

// timerKey identifies a timer row by its witness.
type timerKey struct {
	exec, path string
	fireAt     float64
}

// procKey is a dedupe marker.
type procKey struct{ exec, event string }

// globalChecker holds what the checks share.
type globalChecker struct {
	h     History
	rep   *Report
	ready bool // heal reads and witnesses present
	// readsOnly: witnesses present but no heal reads; only the checks of
	// the queue and timer reads run.
	readsOnly bool

	attempts map[string]*Operation   // token → commit or save
	byExec   map[string][]*Operation // commits and saves per execution, in history order
	execs    []string                // sorted keys of byExec
	emits    map[string]owner        // event id → commit
	spawns   map[string]owner        // child id → commit
	fires    map[timerKey]owner      // schedule witness → commit
	traces   map[string]*Operation   // trace entry id → commit, save or append_trace
	appends  map[string][]*Operation // append_trace calls per execution, in history order

	winner  map[*Operation]int64 // winning commit → the version it wrote
	atVer   map[string][]*Operation
	chainOK map[string]bool // the execution's winners are known
	// seen is, per execution and version v, the earliest return of a
	// register operation that showed version v or a later one
	// (firstObservations); shownAt, the same for the reads of the other
	// tables, which show a winner's side-rows (observations.go).
	seen    map[string][]int64
	shownAt map[string][]shownAt
	// taken holds the winners that surely took effect before they
	// returned, and when (takenBy).
	taken map[*Operation]int64
	// below is, per execution and version v, the latest call of an
	// operation of the primary that found the execution at v or lower
	// (belowVersions, notTakenAt).
	below map[string][]belowAt
	// carrierList is carriers' result, once made; carrierAt carrier's
	// index, once made.
	carrierList map[procKey][]*Operation
	carrierAt   map[procKey]int64
	// acks indexes each execution's acknowledged winners for the
	// staleness of replica loads, made as they ask.
	acks map[string]*ackIndex

	final finalTables
}

// finalTables are the last successful heal reads.
type finalTables struct {
	loads, traces          map[string]*Operation
	outbox, spawns, timers *Operation
	processed              map[procKey]*Operation
}

// prepareGlobal indexes the witnesses, reads the final tables, finds each
// execution's winners and settles what the witnesses settle of the
// indeterminate operations (resolve.go). The checker is not ready (and
// checkRows does nothing) when the history has no heal reads or no
// witnesses; a note says so. An error means the history reuses a witness,
// which the checks cannot tell apart.
func prepareGlobal(h History, rep *Report) (*globalChecker, resolution, error) {
	g := &globalChecker{
		h: h, rep: rep,
		byExec: map[string][]*Operation{}, spawns: map[string]owner{}, fires: map[timerKey]owner{},
		appends: map[string][]*Operation{}, atVer: map[string][]*Operation{}, chainOK: map[string]bool{},
	}
	// Reading the final tables and the two indexing passes (indexed) read
	// the history and write parts of g of their own: three passes at once.
	var found bool
	var commits, traces indexStop
	var wg sync.WaitGroup
	wg.Go(func() { found = g.readFinal() })
	wg.Go(func() { commits = g.indexCommits() })
	traces = g.indexTraces()
	wg.Wait()
	if !found {
		// The queue and timer reads can still be checked on their own and
		// against each other, by the witnesses; a witness the checks
		// cannot follow only leaves them out too.
		if ok, err := g.indexed(commits, traces); ok && err == nil {
			g.readsOnly = true
			rep.Notes = append(rep.Notes, "global checks of the final tables skipped: the history has no heal reads (the queue and timer reads were checked against each other only)")
		} else {
			rep.Notes = append(rep.Notes, "global checks skipped: the history has no heal reads")
		}
		return g, newResolution(), nil
	}
	ok, err := g.indexed(commits, traces)
	if err != nil || !ok {
		return g, newResolution(), err
	}
	g.ready = true
	// Settling the trace appends reads only the trace index and the final
	// tables, and writes only a resolution of its own: it runs beside the
	// chains and the commits' settling, a pass over every listed entry of a
	// history that would otherwise wait for them.
	appendsSettled := newResolution()
	wg.Go(func() { g.resolveAppends(appendsSettled) })
	g.chains()
	res := g.resolveCommits()
	wg.Wait()
	res.merge(appendsSettled)
	return g, res, nil
}

// checkRows runs the checks of the final tables and the queue, ledger and
// timer reads. It stops between checks, and between the reads of a queue,
// once ctx is done, and then returns ctx's error: on a long history they
// take seconds to minutes, and an interrupt must not wait for them.
func (g *globalChecker) checkRows(ctx context.Context) error {
	var steps []func(context.Context) error
	switch {
	case g.readsOnly:
		// No heal reads: no winners are known, so only the checks of
		// what the reads show run.
		steps = append(steps, g.queueOf(outboxQueue), g.queueOf(spawnQueue), step(g.timers))
	case !g.ready:
		return nil
	default:
		steps = append(steps, step(g.observe), step(g.staleAfterShown), step(g.dedupe), step(g.atomicReads), g.queueOf(outboxQueue), g.queueOf(spawnQueue),
			step(g.timers), step(g.traceRings), step(g.replicaReads))
	}
	for _, run := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := run(ctx); err != nil {
			return err
		}
	}
	return nil
}

// step is a check that runs to its end, as a step of checkRows.
func step(check func()) func(context.Context) error {
	return func(context.Context) error { check(); return nil }
}

// queueOf is the queue check of the table spec describes, as a step of
// checkRows.
func (g *globalChecker) queueOf(spec func(*globalChecker) queueSpec) func(context.Context) error {
	return func(ctx context.Context) error { return g.queue(ctx, spec(g)) }
}

// readFinal collects the heal reads; false when there are none.
func (g *globalChecker) readFinal() bool {
	f := finalTables{loads: map[string]*Operation{}, traces: map[string]*Operation{}, processed: map[procKey]*Operation{}}
	found := false
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if !op.Heal || op.Output.Outcome != OutcomeOK || op.Replica != "" {
			continue // a replica's heal reads are checked for convergence instead
		}
		found = true
		switch op.Kind {
		case KindLoad:
			f.loads[op.Execution] = latest(f.loads[op.Execution], op)
		case KindReadTrace:
			f.traces[op.Execution] = latest(f.traces[op.Execution], op)
		case KindPendingOutbox:
			f.outbox = latest(f.outbox, op)
		case KindPendingSpawns:
			f.spawns = latest(f.spawns, op)
		case KindDueTimers:
			if op.Input.Now == math.MaxFloat64 {
				f.timers = latest(f.timers, op)
			}
		case KindIsProcessed:
			k := procKey{op.Execution, op.Input.EventID}
			f.processed[k] = latest(f.processed[k], op)
		}
	}
	g.final = f
	return found
}

func latest(have, op *Operation) *Operation {
	if have == nil || op.Return > have.Return {
		return op
	}
	return have
}

// indexed takes the two indexing passes' ends (indexCommits and
// indexTraces map every witness to its attempt, each stopping at its first
// problem): false, with a note, when a commit carries no token, and an
// error when a witness is reused. Of two problems, the one reported is the
// one at the earlier operation, as a single pass would have met it first
// (at one commit, its other witnesses before its trace entry).
func (g *globalChecker) indexed(commits, traces indexStop) (bool, error) {
	first := commits
	if traces.at < commits.at {
		first = traces
	}
	switch {
	case first.err != nil:
		return false, first.err
	case first.note != "":
		g.rep.Notes = append(g.rep.Notes, first.note)
		return false, nil
	}
	for e := range g.byExec {
		g.execs = append(g.execs, e)
	}
	slices.Sort(g.execs)
	return true, nil
}

// indexStop is where an indexing pass stopped: at the operation at, with
// an error (a witness used twice) or a note (a commit without a token, which
// the checks cannot follow); at is the history's length when it did not.
type indexStop struct {
	at   int
	err  error
	note string
}

// duplicate is the error of a witness used by two attempts.
func duplicate(at int, what, id string) indexStop {
	return indexStop{at: at, err: fmt.Errorf("%w: witness %s %q is used by two attempts", ErrMalformed, what, id)}
}

// indexCommits indexes the commits and saves by token, per execution, and
// their event ids, children and scheduled timers.
func (g *globalChecker) indexCommits() indexStop {
	// The indexes are made at their size: a history of a million
	// operations grew them through a dozen rehashes each.
	commits := 0
	for i := range g.h.Ops {
		if g.h.Ops[i].Kind.IsCommit() {
			commits++
		}
	}
	g.attempts, g.emits, g.winner = make(map[string]*Operation, commits), make(map[string]owner, commits), make(map[*Operation]int64, commits)
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if !op.Kind.IsCommit() {
			continue
		}
		tok := Token(op.Input.Data)
		if tok == "" {
			return indexStop{at: i, note: fmt.Sprintf("global checks skipped: %s of %s carries no witness token", op.Kind, op.Execution)}
		}
		if _, ok := g.attempts[tok]; ok {
			return duplicate(i, "token", tok)
		}
		g.attempts[tok] = op
		g.byExec[op.Execution] = append(g.byExec[op.Execution], op)
		for j, e := range op.Input.Emits {
			if _, ok := g.emits[e.EventID]; ok {
				return duplicate(i, "event id", e.EventID)
			}
			g.emits[e.EventID] = owner{op, j}
		}
		for j, c := range op.Input.Spawns {
			if _, ok := g.spawns[c]; ok {
				return duplicate(i, "child id", c)
			}
			g.spawns[c] = owner{op, j}
		}
		for j, t := range op.Input.Timers {
			if t.Action != "schedule" {
				continue
			}
			k := timerKey{op.Execution, t.Path, t.FireAt}
			if _, ok := g.fires[k]; ok {
				return duplicate(i, "timer", fmt.Sprintf("%s/%s@%v", k.exec, k.path, k.fireAt))
			}
			g.fires[k] = owner{op, j}
		}
	}
	return indexStop{at: len(g.h.Ops)}
}

// indexTraces indexes the trace entries appended, by append_trace and by
// commits, and the append_trace calls per execution.
func (g *globalChecker) indexTraces() indexStop {
	entries := 0
	for i := range g.h.Ops {
		if k := g.h.Ops[i].Kind; k.IsCommit() || k == KindAppendTrace {
			entries++
		}
	}
	g.traces = make(map[string]*Operation, entries)
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		switch {
		case op.Kind == KindAppendTrace:
			g.appends[op.Execution] = append(g.appends[op.Execution], op)
		case !op.Kind.IsCommit() || op.Input.Trace == "":
			continue
		}
		if _, ok := g.traces[op.Input.Trace]; ok {
			return duplicate(i, "trace entry", op.Input.Trace)
		}
		g.traces[op.Input.Trace] = op
	}
	return indexStop{at: len(g.h.Ops)}
}

// won reports whether op is known to have won its CAS.
func (g *globalChecker) won(op *Operation) bool {
	_, ok := g.winner[op]
	return ok
}

// decided reports whether op's execution has a known chain, so that "not a
// winner" means "lost".
func (g *globalChecker) decided(op *Operation) bool { return g.chainOK[op.Execution] }

// name describes an attempt, e.g. "commit c3-17 (e1 v4→5)".
func name(op *Operation) string {
	if op.Kind.IsCommit() {
		return fmt.Sprintf("%s %s (%s v%d→%d)", op.Kind, Token(op.Input.Data), op.Execution, op.Input.Expected, op.Input.Expected+1)
	}
	return fmt.Sprintf("%s %s (%s)", op.Kind, short(op.Input.Trace), op.Execution)
}

// fate says how a commit that did not win ended, for messages.
func fate(op *Operation) string {
	switch op.Output.Outcome {
	case OutcomeConflict:
		return "lost its CAS (conflict)"
	case OutcomeFailed:
		return "failed as not applied"
	case OutcomeIndeterminate:
		return "is indeterminate and did not win"
	}
	return "returned ok but did not win"
}

// opAt describes when and by whom a read was made, for messages.
func opAt(op *Operation) string {
	phase := ""
	if op.Heal {
		phase = "heal "
	}
	return fmt.Sprintf("%s%s by c%d at %dns", phase, op.Kind, op.Client, op.Call)
}

// sortedKeys returns m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
