package linearizability

import (
	"cmp"
	"fmt"
	"slices"
)

// timers checks every due_timers read against the witnesses, and the final
// timers against the last winning op on each (execution, path).
func (g *globalChecker) timers() {
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind != KindDueTimers || op.Output.Outcome != OutcomeOK {
			continue
		}
		seen := map[[2]string]bool{}
		for _, t := range op.Output.Timers {
			at := [2]string{t.Execution, t.Path}
			if seen[at] {
				g.rep.add(ErrTimers, t.Execution, "%s lists timer %s/%s twice", opAt(op), t.Execution, t.Path)
			}
			seen[at] = true
			o, ok := g.fires[timerKey{t.Execution, t.Path, t.FireAt}]
			switch {
			case !ok:
				g.rep.add(ErrPhantom, t.Execution, "timer %s/%s at fire_at %v matches no schedule of any recorded commit (%s)", t.Execution, t.Path, t.FireAt, opAt(op))
			case g.decided(o.op) && !g.won(o.op):
				g.rep.add(ErrAtomicity, t.Execution, "%s %s but its timer %s/%s (fire_at %v) exists (%s)", name(o.op), fate(o.op), t.Execution, t.Path, t.FireAt, opAt(op))
			}
		}
	}
	if g.final.timers == nil {
		g.rep.Notes = append(g.rep.Notes, "no heal due_timers read: final timers unchecked")
		return
	}
	final := map[[2]string]float64{}
	for _, t := range g.final.timers.Output.Timers {
		final[[2]string{t.Execution, t.Path}] = t.FireAt
	}
	deletes := map[timerKey][]*Operation{}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind == KindDeleteTimer && op.Output.Outcome != OutcomeFailed {
			k := timerKey{op.Execution, op.Input.Path, op.Input.FireAt}
			deletes[k] = append(deletes[k], op)
		}
	}
	for _, exec := range g.execs {
		if g.chainOK[exec] {
			g.finalTimers(exec, final, deletes)
		}
	}
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
		var okDelete, anyDelete bool
		for _, d := range deletes[timerKey{exec, path, l.ref.FireAt}] {
			anyDelete = true
			okDelete = okDelete || d.Output.Outcome == OutcomeOK
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
