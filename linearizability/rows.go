package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// timers checks every due_timers read on its own (each timer listed once,
// due at now, soonest first, scheduled by a commit that won) and against
// real time (timerReads), and the final timers against the last winning op
// on each (execution, path).
func (g *globalChecker) timers() {
	var reads []*Operation // the primary's, by call time
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind != KindDueTimers || op.Output.Outcome != OutcomeOK {
			continue
		}
		if op.Replica == "" {
			reads = append(reads, op)
		}
		g.timerRead(op)
	}
	slices.SortStableFunc(reads, func(a, b *Operation) int { return cmp.Compare(a.Call, b.Call) })
	deletes := map[timerKey][]*Operation{}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind == KindDeleteTimer && op.Output.Outcome != OutcomeFailed {
			k := timerKey{op.Execution, op.Input.Path, op.Input.FireAt}
			deletes[k] = append(deletes[k], op)
		}
	}
	g.timerReads(reads, deletes)
	if g.final.timers == nil {
		if !g.readsOnly {
			g.rep.Notes = append(g.rep.Notes, "no heal due_timers read: final timers unchecked")
		}
		return
	}
	final := map[[2]string]float64{}
	for _, t := range g.final.timers.Output.Timers {
		final[[2]string{t.Execution, t.Path}] = t.FireAt
	}
	for _, exec := range g.execs {
		if g.chainOK[exec] {
			g.finalTimers(exec, final, deletes)
		}
	}
}

// timerRead checks one due_timers(now) read on its own: every timer listed
// once, due (fire_at <= now), soonest first (non-decreasing fire_at: the
// contract leaves the order of equal fire_at open), and scheduled by a
// commit that did not lose.
func (g *globalChecker) timerRead(op *Operation) {
	now := op.Input.Now
	seen := map[[2]string]bool{}
	notDue := 0
	for i, t := range op.Output.Timers {
		at := [2]string{t.Execution, t.Path}
		if seen[at] {
			g.rep.add(ErrTimers, t.Execution, "%s lists timer %s/%s twice", opAt(op), t.Execution, t.Path)
		}
		seen[at] = true
		if t.FireAt > now {
			if notDue == 0 {
				g.rep.add(ErrTimers, t.Execution, "%s lists timer %s/%s at fire_at %v, which is not due%s",
					dueAt(op), t.Execution, t.Path, t.FireAt, g.notDueCount(op))
			}
			notDue++
		}
		if prev := op.Output.Timers[max(i-1, 0)]; t.FireAt < prev.FireAt {
			g.rep.add(ErrDeliveryOrder, t.Execution, "%s lists timer %s/%s (fire_at %v) after %s/%s (fire_at %v): not soonest first",
				dueAt(op), t.Execution, t.Path, t.FireAt, prev.Execution, prev.Path, prev.FireAt)
		}
		o, ok := g.fires[timerKey{t.Execution, t.Path, t.FireAt}]
		switch {
		case !ok:
			g.rep.add(ErrPhantom, t.Execution, "timer %s/%s at fire_at %v matches no schedule of any recorded commit (%s)", t.Execution, t.Path, t.FireAt, opAt(op))
		case g.decided(o.op) && !g.won(o.op):
			g.rep.add(ErrAtomicity, t.Execution, "%s %s but its timer %s/%s (fire_at %v) exists (%s)", name(o.op), fate(o.op), t.Execution, t.Path, t.FireAt, opAt(op))
		case overridden(o):
			// The batch's timer ops apply in order, in one transaction:
			// a schedule a later op of the same batch replaces is never
			// seen by anyone.
			g.rep.add(ErrTimers, t.Execution, "%s lists timer %s/%s at fire_at %v, which %s scheduled and replaced in the same batch: it was never stored",
				dueAt(op), t.Execution, t.Path, t.FireAt, name(o.op))
		}
	}
}

// overridden reports whether the timer op o.i of o's batch is followed, in
// the same batch, by another op on its path.
func overridden(o owner) bool {
	path := o.op.Input.Timers[o.i].Path
	return slices.ContainsFunc(o.op.Input.Timers[o.i+1:], func(u TimerRef) bool { return u.Path == path })
}

// notDueCount says how many timers a read lists that are not due, when
// more than one.
func (g *globalChecker) notDueCount(op *Operation) string {
	n := 0
	for _, t := range op.Output.Timers {
		if t.FireAt > op.Input.Now {
			n++
		}
	}
	if n < 2 {
		return ""
	}
	return fmt.Sprintf(" (%d of the %d it lists are not due)", n, len(op.Output.Timers))
}

// dueAt describes a due_timers read with its now, for messages (the heal
// read's now is every time there is, and goes unsaid).
func dueAt(op *Operation) string {
	if op.Heal {
		return opAt(op)
	}
	return fmt.Sprintf("due_timers(now %v) by c%d at %dns", op.Input.Now, op.Client, op.Call)
}

// tkey is a timer's witness as one string, the key of the real-time walk.
func tkey(exec, path string, fireAt float64) string {
	return exec + "\x00" + path + "\x00" + strconv.FormatFloat(fireAt, 'g', -1, 64)
}

// timerReads holds the primary's due_timers reads (reads, by call time)
// to real time, as queue.go holds the outbox reads:
//
//   - a timer a winner scheduled (and left scheduled at the end of its
//     batch), whose commit returned ok before a due_timers(now >= fire_at)
//     was called, must be listed by it unless an operation that may have
//     removed it was called before the read returned: the next winner
//     touching its path, or a delete_timer of it that did not fail and did
//     not return before the commit was called;
//   - a timer must not be listed by a read called after it was surely
//     removed: after a later winner touching its path returned ok, or
//     after a delete_timer of it returned ok that was called after its
//     commit returned ok (a commit that overlaps or follows the delete may
//     have scheduled it after the delete, which was then a no-op).
//
// An indeterminate operation may take effect at any time until the end of
// the history: it removes nothing for sure, and may remove from its call.
// The heal read of an execution whose winners are known is left to
// finalTimers.
func (g *globalChecker) timerReads(reads []*Operation, deletes map[timerKey][]*Operation) {
	// next finds the first winner after o's version that touches path.
	touchers := func(o *Operation, path string) []*Operation {
		var out []*Operation
		chain := g.atVer[o.Execution]
		for v := g.winner[o] + 1; v < int64(len(chain)); v++ {
			if slices.ContainsFunc(chain[v].Input.Timers, func(t TimerRef) bool { return t.Path == path }) {
				out = append(out, chain[v])
			}
		}
		return out
	}
	// Must not be listed: when each listed timer was surely removed.
	removed := map[timerKey]*Operation{} // the removal acknowledged first; nil: none
	removal := func(k timerKey) *Operation {
		if op, ok := removed[k]; ok {
			return op
		}
		var first *Operation
		sooner := func(op *Operation) {
			if first == nil || op.Return < first.Return {
				first = op
			}
		}
		o, ok := g.fires[k]
		if ok && o.op.Output.Outcome == OutcomeOK {
			for _, d := range deletes[k] {
				if d.Output.Outcome == OutcomeOK && o.op.Return < d.Call {
					sooner(d)
				}
			}
		}
		if ok && g.won(o.op) {
			for _, c := range touchers(o.op, k.path) {
				if c.Output.Outcome == OutcomeOK {
					sooner(c)
				}
			}
		}
		removed[k] = first
		return first
	}
	var finalHas map[timerKey]bool
	if g.final.timers != nil {
		finalHas = map[timerKey]bool{}
		for _, t := range g.final.timers.Output.Timers {
			finalHas[timerKey{t.Execution, t.Path, t.FireAt}] = true
		}
	}
	reported := map[string]bool{}
	lastListed := map[string]int64{} // key → the last call of a read listing it
	for _, r := range reads {
		for _, t := range r.Output.Timers {
			k := timerKey{t.Execution, t.Path, t.FireAt}
			key := tkey(k.exec, k.path, k.fireAt)
			lastListed[key] = max(lastListed[key], r.Call)
			if r.Heal && g.chainOK[k.exec] {
				continue // finalTimers holds the final timers to the winners
			}
			by := removal(k)
			if by == nil || by.Return >= r.Call || reported[key] {
				continue
			}
			reported[key] = true
			how := fmt.Sprintf("cancelled or re-armed by %s (v%d)", name(by), g.winner[by])
			if by.Kind == KindDeleteTimer {
				how = fmt.Sprintf("deleted by delete_timer of c%d", by.Client)
			}
			if !r.Heal && finalHas != nil && !finalHas[k] {
				g.rep.add(ErrStaleRead, k.exec, "%s still lists timer %s/%s (fire_at %v), %s %s before it was called; the final timers no longer hold it",
					dueAt(r), k.exec, k.path, k.fireAt, how, since(r.Call-by.Return))
				continue
			}
			g.rep.add(ErrTimers, k.exec, "timer %s/%s (fire_at %v) was %s at %dns but is listed again by %s",
				k.exec, k.path, k.fireAt, how, by.Return, dueAt(r))
		}
	}
	// Must be listed.
	var dues []due
	keyOf := map[string]timerKey{}
	for o := range g.winner {
		after := g.takenBy(o)
		if after == EndOfHistory {
			continue // an indeterminate winner nothing showed: the heal read is finalTimers'
		}
		for j, t := range o.Input.Timers {
			if t.Action != "schedule" || overridden(owner{o, j}) {
				continue // overridden within its own batch: never stored
			}
			k := timerKey{o.Execution, t.Path, t.FireAt}
			gone := EndOfHistory
			if ts := touchers(o, t.Path); len(ts) > 0 {
				gone = ts[0].Call
			}
			for _, d := range deletes[k] {
				if d.returnTime() >= o.Call {
					gone = min(gone, d.Call)
				}
			}
			key := tkey(k.exec, k.path, k.fireAt)
			keyOf[key] = k
			dues = append(dues, due{key: key, owner: o, after: after, gone: gone, fireAt: t.FireAt})
		}
	}
	var live []*Operation
	for _, r := range reads {
		if !r.Heal {
			live = append(live, r) // finalTimers holds the heal read to the winners
		}
	}
	listed := func(r *Operation) map[string]bool {
		in := make(map[string]bool, len(r.Output.Timers))
		for _, t := range r.Output.Timers {
			in[tkey(t.Execution, t.Path, t.FireAt)] = true
		}
		return in
	}
	notDue := func(r *Operation, d due) bool { return d.fireAt > r.Input.Now }
	missing(live, dues, listed, notDue, reported, func(r *Operation, d due) {
		k := keyOf[d.key]
		if lastListed[d.key] > r.returnTime() || (finalHas != nil && finalHas[k]) {
			g.rep.add(ErrStaleRead, k.exec, "%s misses timer %s/%s (fire_at %v) of %s, scheduled %s before it was called and still there after it",
				dueAt(r), k.exec, k.path, k.fireAt, name(d.owner), since(r.Call-d.after))
			return
		}
		g.rep.add(ErrTimers, k.exec, "%s misses timer %s/%s (fire_at %v) of %s (v%d), scheduled %s before it was called, and neither cancelled nor deleted before it returned",
			dueAt(r), k.exec, k.path, k.fireAt, name(d.owner), g.winner[d.owner], since(r.Call-d.after))
	})
	rows := func(r *Operation) []shownRow {
		out := make([]shownRow, 0, len(r.Output.Timers))
		for _, t := range r.Output.Timers {
			if o, ok := g.fires[timerKey{t.Execution, t.Path, t.FireAt}]; ok {
				out = append(out, shownRow{tkey(t.Execution, t.Path, t.FireAt), o.op})
			}
		}
		return out
	}
	partial(live, dues, rows, notDue, reported, func(r *Operation, shown string, d due) {
		k := keyOf[d.key]
		g.rep.add(ErrAtomicity, k.exec, "%s lists timer %s of %s but not its timer %s/%s (fire_at %v), due too: a reader saw part of a commit",
			dueAt(r), strings.ReplaceAll(shown, "\x00", "/"), name(d.owner), k.exec, k.path, k.fireAt)
	})
}

// finalTimers checks one execution's final timers: for each path, the last
// winning op on it decides. A schedule leaves its fire_at unless a sweep
// deleted exactly that fire_at; a cancel leaves nothing.
func (g *globalChecker) finalTimers(exec string, final map[[2]string]float64, deletes map[timerKey][]*Operation) {
	type lastOp struct {
		ref TimerRef
		by  *Operation
	}
	last := map[string]lastOp{}
	chain := g.atVer[exec]
	for v := 1; v < len(chain); v++ {
		for _, t := range chain[v].Input.Timers {
			last[t.Path] = lastOp{t, chain[v]}
		}
	}
	for _, path := range sortedKeys(last) {
		l := last[path]
		at, present := final[[2]string{exec, path}]
		where := fmt.Sprintf("%s/%s", exec, path)
		if l.ref.Action != "schedule" {
			if present {
				g.rep.add(ErrTimers, exec, "timer %s holds fire_at %v but the last winning op on it, by %s (v%d), cancelled it",
					where, at, name(l.by), g.winner[l.by])
			}
			continue
		}
		// A delete acted on the timer only if the timer existed when the
		// delete took effect: surely when the commit returned ok before the
		// delete was called; never when the delete returned before the
		// commit was called (a delete of an absent timer is a no-op).
		var okDelete, anyDelete bool
		for _, d := range deletes[timerKey{exec, path, l.ref.FireAt}] {
			if d.returnTime() < l.by.Call {
				continue
			}
			anyDelete = true
			okDelete = okDelete || (d.Output.Outcome == OutcomeOK && l.by.Output.Outcome == OutcomeOK && l.by.Return < d.Call)
		}
		switch {
		case present && at == l.ref.FireAt && okDelete:
			g.rep.add(ErrTimers, exec, "timer %s at fire_at %v was deleted (ok) but is still there", where, at)
		case present && at != l.ref.FireAt:
			g.rep.add(ErrTimers, exec, "timer %s holds fire_at %v but the last winning op on it is schedule at %v by %s (v%d)",
				where, at, l.ref.FireAt, name(l.by), g.winner[l.by])
		case !present && !anyDelete:
			g.rep.add(ErrTimers, exec, "timer %s scheduled at fire_at %v by %s (v%d) is missing, and no sweep deleted that fire_at%s",
				where, l.ref.FireAt, name(l.by), g.winner[l.by], g.staleSweeps(exec, path, deletes))
		}
	}
}

// staleSweeps mentions deletes of other fire_at values on a path, the usual
// cause of a vanished re-armed timer.
func (g *globalChecker) staleSweeps(exec, path string, deletes map[timerKey][]*Operation) string {
	n := 0
	for k, ops := range deletes {
		if k.exec == exec && k.path == path {
			n += len(ops)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d sweeps deleted older fire_at values: a stale sweep deleted a re-armed timer)", n)
}

// traceRings checks each execution's final ring: ascending, contiguous, at
// most trace_max entries; every entry written by a winner or a standalone
// append that was not refused; winners' entries in version order; and no
// winner's entry missing where the ring still reaches back to it.
func (g *globalChecker) traceRings() {
	for _, exec := range sortedKeys(g.final.traces) {
		items := g.final.traces[exec].Output.Trace
		if limit := g.h.Meta.TraceMax; limit > 0 && len(items) > limit {
			g.rep.add(ErrTraceRing, exec, "final ring of %s holds %d entries, more than trace_max %d", exec, len(items), limit)
		}
		present := map[string]bool{}
		lastVer, minVer := int64(0), int64(-1)
		for i, it := range items {
			present[it.Entry] = true
			if i > 0 && it.Index != items[i-1].Index+1 {
				g.rep.add(ErrTraceRing, exec, "final ring of %s has index %d after %d", exec, it.Index, items[i-1].Index)
			}
			op := g.traces[it.Entry]
			switch {
			case op == nil || op.Execution != exec:
				g.rep.add(ErrPhantom, exec, "trace entry %d of %s (%s) was appended by no recorded operation on %s", it.Index, exec, it.Entry, exec)
			case op.Kind == KindAppendTrace && op.Output.Outcome == OutcomeFailed:
				g.rep.add(ErrAtomicity, exec, "%s failed as not applied but its entry is at index %d", name(op), it.Index)
			case op.Kind.IsCommit() && g.decided(op) && !g.won(op):
				g.rep.add(ErrAtomicity, exec, "%s %s but its trace step is at index %d", name(op), fate(op), it.Index)
			case op.Kind.IsCommit() && g.won(op):
				v := g.winner[op]
				if v <= lastVer {
					g.rep.add(ErrTraceRing, exec, "trace step of %s (v%d) is at index %d, after the step of v%d", name(op), v, it.Index, lastVer)
				}
				lastVer = v
				if minVer < 0 {
					minVer = v
				}
			}
		}
		g.missingTrace(exec, items, present, minVer)
	}
}

// missingTrace reports winners' trace steps and ok appends that the ring
// must still hold: all of them when nothing was trimmed (the ring starts at
// index 0), else the winners' steps newer than the oldest winner step
// present.
func (g *globalChecker) missingTrace(exec string, items []TraceItem, present map[string]bool, minVer int64) {
	trimmed := len(items) > 0 && items[0].Index > 0
	if g.chainOK[exec] {
		chain := g.atVer[exec]
		for v := 1; v < len(chain); v++ {
			c := chain[v]
			if c.Input.Trace == "" || present[c.Input.Trace] || (trimmed && (minVer < 0 || int64(v) < minVer)) {
				continue
			}
			g.rep.add(ErrAtomicity, exec, "%s won (v%d) but its trace step is not in the final ring", name(c), v)
		}
	}
	if trimmed {
		return
	}
	var appends []*Operation
	for _, op := range g.appends[exec] {
		if op.Output.Outcome == OutcomeOK && !present[op.Input.Trace] {
			appends = append(appends, op)
		}
	}
	slices.SortFunc(appends, func(a, b *Operation) int { return cmp.Compare(a.Call, b.Call) })
	for _, op := range appends {
		g.rep.add(ErrTraceRing, exec, "%s returned ok but its entry is not in the final ring, which was never trimmed", name(op))
	}
}
