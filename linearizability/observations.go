package linearizability

// A commit is atomic: its row, its dedupe marker and its outbox, spawn,
// timer and trace rows become visible together. Porcupine checks each
// execution's register and its trace ring apart, and the queue and timer
// reads are checked outside it; what ties them is when each winner surely
// took effect: by the return of the first operation that showed any part
// of it (its version or a later one, one of its side-rows).
//
//   - A load, load_for_event or is_processed of the primary called after a
//     read of another table showed a winner's side-row must show the
//     winner's version (or a later one) and the event it processed
//     (staleAfterShown).
//   - The queue and due_timers reads must list a winner's rows from when it
//     took effect (takenBy), not only from when its commit returned; an
//     indeterminate winner's, from when any part of it was seen.
//   - A read_trace must list a winner's step once its version was seen:
//     resolveCommits brings the winner's return forward in porcupine.

// shownAt is the earliest return of a read of another table that showed a
// side-row of the winner of version v (or of a later one).
type shownAt struct {
	at int64
	by *Operation // the read
	v  int64      // the version of the winner whose row it showed
}

// observations returns, per execution, for each version v, the
// earliest return of a read (of the primary or a replica: a replica shows
// committed rows only) that listed an outbox entry, spawn, timer or trace
// step of the winner of v or of a later version.
func (g *globalChecker) observations() map[string][]shownAt {
	out := map[string][]shownAt{}
	note := func(o *Operation, r *Operation) {
		v, ok := g.winner[o]
		if !ok {
			return
		}
		s := out[o.Execution]
		for int64(len(s)) <= v {
			s = append(s, shownAt{at: EndOfHistory})
		}
		if r.Return < s[v].at {
			s[v] = shownAt{r.Return, r, v}
		}
		out[o.Execution] = s
	}
	var steps wideFilter // the winners' trace steps: most listed entries are not
	for _, chain := range g.atVer {
		for _, op := range chain {
			if op != nil && op.Input.Trace != "" {
				if steps == nil {
					steps = newWideFilter()
				}
				steps.add(op.Input.Trace)
			}
		}
	}
	for i := range g.h.Ops {
		r := &g.h.Ops[i]
		if r.Output.Outcome != OutcomeOK || r.Heal {
			// A heal read binds nothing called after it but other heal
			// reads, which the final-table checks hold to the winners;
			// and it lists every row there is.
			continue
		}
		switch r.Kind {
		case KindPendingOutbox:
			for _, it := range r.Output.Outbox {
				if o, ok := g.emits[it.EventID]; ok {
					note(o.op, r)
				}
			}
		case KindPendingSpawns:
			for _, it := range r.Output.Spawns {
				if o, ok := g.spawns[it.Child]; ok {
					note(o.op, r)
				}
			}
		case KindDueTimers:
			for _, t := range r.Output.Timers {
				if o, ok := g.fires[timerKey{t.Execution, t.Path, t.FireAt}]; ok {
					note(o.op, r)
				}
			}
		case KindReadTrace:
			// The newest winner's step the read lists implies every older
			// winner: about one lookup per read, not one per entry.
			items := r.Output.Trace
			if steps == nil {
				continue
			}
			for j := len(items) - 1; j >= 0; j-- {
				if !steps.has(items[j].Entry) {
					continue
				}
				if o := g.traces[items[j].Entry]; o != nil && o.Kind.IsCommit() && g.won(o) && o.Execution == r.Execution {
					note(o, r)
					break
				}
			}
		}
	}
	for exec, s := range out {
		for v := len(s) - 2; v >= 0; v-- {
			if s[v+1].at < s[v].at {
				s[v] = s[v+1]
			}
		}
		out[exec] = s
	}
	return out
}

// belowAt is an operation of the primary that found its execution at
// version v or lower (a commit that won v, or lost to a row at v or lower or
// to no row; a load or load_for_event that returned v or lower, or no row)
// and when it was called: the winners of later versions took effect after
// that call, when the operation was linearized at the latest.
type belowAt struct {
	at int64
	by *Operation
}

// belowVersions returns, per execution, for each version v, the latest
// call of an operation of the primary that found the execution at v or
// lower. A replica's reads do not count: they may be stale. A stale load of
// the primary is not linearizable, which porcupine reports before any
// finding of these checks.
func (g *globalChecker) belowVersions() map[string][]belowAt {
	out := map[string][]belowAt{}
	note := func(op *Operation, v int64) {
		if v < 0 || v > 1<<20 || op.Replica != "" {
			return
		}
		s := out[op.Execution]
		for int64(len(s)) <= v {
			s = append(s, belowAt{at: -1})
		}
		if op.Call > s[v].at {
			s[v] = belowAt{op.Call, op}
		}
		out[op.Execution] = s
	}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		switch out := &op.Output; {
		case (op.Kind == KindLoad || op.Kind == KindLoadForEvent) && out.Outcome == OutcomeOK && out.Exists:
			note(op, out.Version)
		case (op.Kind == KindLoad || op.Kind == KindLoadForEvent) && out.Outcome == OutcomeOK:
			note(op, 0)
		case !op.Kind.IsCommit():
		case out.Outcome == OutcomeOK:
			note(op, op.Input.Expected+1)
		case out.Outcome == OutcomeConflict && out.Found != nil:
			note(op, *out.Found)
		case out.Outcome == OutcomeConflict:
			note(op, 0)
		}
	}
	for exec, s := range out {
		for v := 1; v < len(s); v++ {
			if s[v-1].at > s[v].at {
				s[v] = s[v-1]
			}
		}
		out[exec] = s
	}
	return out
}

// notTakenAt is a time at which the winner op surely had not taken effect
// yet: its call, or the later call of an operation that found its execution
// below op's version (op had not taken effect when that operation was
// linearized, after its call), and that operation (nil for op's call).
func (g *globalChecker) notTakenAt(op *Operation) (int64, *Operation) {
	v, ok := g.winner[op]
	s := g.below[op.Execution]
	if !ok || v < 1 || len(s) == 0 {
		return op.Call, nil
	}
	b := s[min(v-1, int64(len(s)-1))]
	if b.by == nil || b.at <= op.Call {
		return op.Call, nil
	}
	return b.at, b.by
}

// observe fills g.shownAt, g.taken and g.below, which the checks after it
// read.
func (g *globalChecker) observe() {
	g.shownAt = g.observations()
	g.below = g.belowVersions()
	g.taken = map[*Operation]int64{}
	for _, exec := range g.execs {
		seen, shown := g.seen[exec], g.shownAt[exec]
		if len(seen) == 0 && len(shown) == 0 {
			continue
		}
		for v, op := range g.atVer[exec] {
			if op == nil {
				continue
			}
			at := op.returnTime()
			if v < len(seen) {
				at = min(at, seen[v])
			}
			if v < len(shown) {
				at = min(at, shown[v].at)
			}
			if at = max(at, op.Call); at < op.returnTime() {
				g.taken[op] = at
			}
		}
	}
}

// takenBy is a time by which the winner op surely took effect: its return
// when acknowledged, else EndOfHistory, or earlier the return of the first
// operation that showed its version, a later one, or a side-row of either.
func (g *globalChecker) takenBy(op *Operation) int64 {
	if at, ok := g.taken[op]; ok {
		return at
	}
	return op.returnTime()
}

// staleAfterShown checks the primary's register reads against the side-rows
// other reads showed before they were called: the row must be at the
// version of the winner whose side-row was shown, or later, and an event
// a shown winner processed must read as processed.
func (g *globalChecker) staleAfterShown() {
	first := EndOfHistory // the earliest return of a read that showed anything
	for _, s := range g.shownAt {
		if len(s) > 0 {
			first = min(first, s[0].at)
		}
	}
	if first == EndOfHistory {
		return
	}
	// carrier is the lowest version a winner carrying k's event wrote.
	carrier := func(k procKey) (int64, bool) {
		low, ok := int64(0), false
		for _, op := range g.carriers()[k] {
			if v, won := g.winner[op]; won && (!ok || v < low) {
				low, ok = v, true
			}
		}
		return low, ok
	}
	reported := map[string]bool{}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Call <= first || op.Output.Outcome != OutcomeOK || op.Replica != "" || reported[op.Execution] ||
			(op.Kind != KindLoad && op.Kind != KindLoadForEvent && op.Kind != KindIsProcessed) {
			continue
		}
		s := g.shownAt[op.Execution]
		if len(s) == 0 {
			continue
		}
		var what string
		var by shownAt
		if op.Kind != KindIsProcessed {
			got := int64(0)
			if op.Output.Exists {
				got = op.Output.Version
			}
			if got+1 < int64(len(s)) && s[got+1].at < op.Call {
				by = s[got+1]
				what = "returned " + showVersion(op)
			}
		}
		if what == "" && op.Kind != KindLoad && !op.Output.Processed {
			if v, ok := carrier(procKey{op.Execution, op.Input.EventID}); ok && v < int64(len(s)) && s[v].at < op.Call {
				by = s[v]
				what = "said event " + op.Input.EventID + " was not processed"
			}
		}
		if what == "" {
			continue
		}
		reported[op.Execution] = true
		w := g.atVer[op.Execution][by.v]
		g.rep.add(ErrStaleRead, op.Execution, "%s %s, but %s had taken effect before it was called: %s, which returned %s before, listed %s",
			opAt(op), what, name(w), opAt(by.by), since(op.Call-by.at), sideRows(by.by))
	}
}

// sideRows names what a read of another table lists, for messages.
func sideRows(r *Operation) string {
	switch r.Kind {
	case KindPendingOutbox:
		return "its outbox entries"
	case KindPendingSpawns:
		return "its spawns"
	case KindDueTimers:
		return "its timers"
	}
	return "its trace step"
}

// showVersion says which row a load showed, for messages.
func showVersion(op *Operation) string {
	if !op.Output.Exists {
		return "no row"
	}
	return "v" + itoa(op.Output.Version)
}
