package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// Prefix states on replicas. A replica applies the primary's commits in
// order, each whole, and never goes back, so each read it serves shows the
// state some prefix of the committed history produces, and no read shows
// less than a read of the same replica that returned before it was called.
// Per execution a prefix is its winners up to a version v: the row at v,
// the dedupe markers, queue entries, timers and trace steps of the winners
// up to v (less what an acknowledgement, cancel or delete_timer called
// before the read returned may have removed).
//
// Every replica read says something of v, for the executions it covers:
//
//   - lo, what it proves the replica had applied: the version a load
//     shows, the lowest winner carrying an event it says is processed, the
//     newest winner whose outbox entry, spawn, timer or trace step it
//     lists;
//   - and what it proves the replica had not applied: a load shows v and
//     no more; a marker said not processed, a winner's entry or due timer
//     not listed (and not removed), an older winner's timer still listed, a
//     winner's trace step missing from a ring that reaches back past it,
//     each puts v below that winner.
//
// A read whose own lo contradicts what it misses showed part of a commit
// (ErrAtomicity: a torn read). A read that misses what the same replica had
// shown before it was called (by any read of any table), or, with
// read-your-writes, what its replica's own acknowledged commits wrote, is
// no prefix either (ErrReplicaRead): the replica showed part of a commit
// across its reads, or went back. The rules of replica.go already hold the
// row reads against each other; these add every table.

// prefixMark is a lower bound one replica read set: its replica held at
// least version v of an execution from the read's return on.
type prefixMark struct {
	at int64
	v  int64
	by *Operation
}

// prefixMarks answers "the highest version a read of replica r had shown
// of exec before t, and which read showed it".
type prefixMarks map[[2]string][]prefixMark

func (m prefixMarks) add(replica, exec string, mark prefixMark) {
	k := [2]string{replica, exec}
	m[k] = append(m[k], mark)
}

// seal sorts each list by return and makes v (and by) a running maximum.
func (m prefixMarks) seal() {
	for _, ms := range m {
		slices.SortFunc(ms, func(a, b prefixMark) int { return cmp.Compare(a.at, b.at) })
		for i := 1; i < len(ms); i++ {
			if ms[i].v < ms[i-1].v {
				ms[i].v, ms[i].by = ms[i-1].v, ms[i-1].by
			}
		}
	}
}

// before returns the highest mark set strictly before t; v 0 and by nil
// when none.
func (m prefixMarks) before(replica, exec string, t int64) prefixMark {
	ms := m[[2]string{replica, exec}]
	i := sort.Search(len(ms), func(i int) bool { return ms[i].at >= t })
	if i == 0 {
		return prefixMark{}
	}
	return ms[i-1]
}

// prefixState is what the prefix rules share over one history.
type prefixState struct {
	g *globalChecker
	// marks holds the lower bounds of every replica read, side holds those
	// of the reads of the other tables only.
	marks, side prefixMarks
	// own is, with read-your-writes, what each replica's own acknowledged
	// commits wrote (replica.go's floors).
	own *floors
	// listedSeq holds the outbox and spawn keys some read listed, at
	// their seq; removedBy is, per such key, the earliest call of an
	// acknowledgement of its seq; unknownAck the earliest call of an
	// acknowledgement of a seq no read ever listed, which may have removed
	// any entry no read ever listed.
	listedSeq  map[string]bool
	removedBy  map[string]int64
	unknownAck [2]int64 // outbox, spawns
	// entries lists, per execution, the winners' outbox and spawn keys in
	// version order; paths the winners' timer ops per (execution, path);
	// steps the versions of the winners with a trace step.
	entries map[string][]prefixEntry
	paths   map[string]map[string][]prefixTimerOp
	steps   map[string][]int64
	// deletes are the delete_timer calls that did not fail.
	deletes map[timerKey][]*Operation
	// reported keeps one report per replica, execution and rule.
	reported map[[3]string]bool
}

// prefixEntry is one winner's queue entry.
type prefixEntry struct {
	v     int64
	key   string
	spawn bool
}

// prefixTimerOp is one winner's timer op on one path.
type prefixTimerOp struct {
	v        int64
	schedule bool
	fireAt   float64
}

// replicaPrefixes holds every replica read to the prefix rules. reads are
// the replica reads that succeeded (replicaReads); own the read-your-writes
// floors.
func (g *globalChecker) replicaPrefixes(reads []int, own *floors) {
	s := &prefixState{g: g, marks: prefixMarks{}, side: prefixMarks{}, own: own, reported: map[[3]string]bool{}}
	s.index()
	for _, i := range reads {
		op := &g.h.Ops[i]
		for exec, v := range s.lows(op) {
			m := prefixMark{at: op.Return, v: v, by: op}
			s.marks.add(op.Replica, exec, m)
			if sideRead(op.Kind) {
				s.side.add(op.Replica, exec, m)
			}
		}
	}
	s.marks.seal()
	s.side.seal()
	rm := newRemovedState(g)
	for _, i := range reads {
		op := &g.h.Ops[i]
		s.check(op)
		switch op.Kind {
		case KindPendingOutbox, KindPendingSpawns, KindDueTimers:
			rm.check(op, s.marks, s.lows(op))
		}
	}
}

// index gathers the winners' side-writes and the removals.
func (s *prefixState) index() {
	g := s.g
	s.entries, s.paths, s.steps = map[string][]prefixEntry{}, map[string]map[string][]prefixTimerOp{}, map[string][]int64{}
	for _, exec := range g.execs {
		if !g.chainOK[exec] {
			continue
		}
		for v, w := range g.atVer[exec] {
			if w == nil {
				continue
			}
			for _, e := range w.Input.Emits {
				s.entries[exec] = append(s.entries[exec], prefixEntry{int64(v), e.EventID, false})
			}
			for _, c := range w.Input.Spawns {
				s.entries[exec] = append(s.entries[exec], prefixEntry{int64(v), c, true})
			}
			for _, t := range w.Input.Timers {
				if s.paths[exec] == nil {
					s.paths[exec] = map[string][]prefixTimerOp{}
				}
				s.paths[exec][t.Path] = append(s.paths[exec][t.Path], prefixTimerOp{int64(v), t.Action == "schedule", t.FireAt})
			}
			if w.Input.Trace != "" {
				s.steps[exec] = append(s.steps[exec], int64(v))
			}
		}
	}
	seqOf := [2]map[string]int64{{}, {}}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Output.Outcome != OutcomeOK {
			continue
		}
		switch op.Kind {
		case KindPendingOutbox:
			for _, it := range op.Output.Outbox {
				seqOf[0][it.EventID] = it.Seq
			}
		case KindPendingSpawns:
			for _, it := range op.Output.Spawns {
				seqOf[1][it.Child] = it.Seq
			}
		}
	}
	keyOf := [2]map[int64]bool{{}, {}}
	for q := range seqOf {
		for _, seq := range seqOf[q] {
			keyOf[q][seq] = true
		}
	}
	acked := [2]map[int64]int64{{}, {}}
	s.unknownAck = [2]int64{EndOfHistory, EndOfHistory}
	s.deletes = map[timerKey][]*Operation{}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Output.Outcome == OutcomeFailed {
			continue
		}
		q := 0
		switch op.Kind {
		case KindAckSpawn:
			q = 1
		case KindAckOutbox:
		case KindDeleteTimer:
			k := timerKey{op.Execution, op.Input.Path, op.Input.FireAt}
			s.deletes[k] = append(s.deletes[k], op)
			continue
		default:
			continue
		}
		if !keyOf[q][op.Input.Seq] {
			s.unknownAck[q] = min(s.unknownAck[q], op.Call)
			continue
		}
		if at, ok := acked[q][op.Input.Seq]; !ok || op.Call < at {
			acked[q][op.Input.Seq] = op.Call
		}
	}
	s.removedBy, s.listedSeq = map[string]int64{}, map[string]bool{}
	for q := range seqOf {
		for key, seq := range seqOf[q] {
			s.listedSeq[key] = true
			if at, ok := acked[q][seq]; ok {
				s.removedBy[key] = at
			}
		}
	}
}

// lows returns, per execution with a known chain, the lowest version the
// read proves its replica had applied (only those above 0).
func (s *prefixState) lows(op *Operation) map[string]int64 {
	g := s.g
	out := map[string]int64{}
	raise := func(exec string, v int64) {
		if g.chainOK[exec] && v > out[exec] {
			out[exec] = v
		}
	}
	winnerOf := func(o owner, ok bool) {
		if v, won := g.winner[o.op]; ok && won {
			raise(o.op.Execution, v)
		}
	}
	switch op.Kind {
	case KindLoad, KindLoadForEvent:
		if op.Output.Exists {
			raise(op.Execution, op.Output.Version)
		}
		if op.Output.Processed {
			if cv, ok := g.carrier(op.Execution, op.Input.EventID); ok {
				raise(op.Execution, cv)
			}
		}
	case KindIsProcessed:
		if op.Output.Processed {
			if cv, ok := g.carrier(op.Execution, op.Input.EventID); ok {
				raise(op.Execution, cv)
			}
		}
	case KindPendingOutbox:
		for _, it := range op.Output.Outbox {
			o, ok := g.emits[it.EventID]
			winnerOf(o, ok)
		}
	case KindPendingSpawns:
		for _, it := range op.Output.Spawns {
			o, ok := g.spawns[it.Child]
			winnerOf(o, ok)
		}
	case KindDueTimers:
		for _, t := range op.Output.Timers {
			o, ok := g.fires[timerKey{t.Execution, t.Path, t.FireAt}]
			winnerOf(o, ok)
		}
	case KindReadTrace:
		for _, it := range op.Output.Trace {
			if o := g.traces[it.Entry]; o != nil && o.Kind.IsCommit() && o.Execution == op.Execution {
				if v, won := g.winner[o]; won {
					raise(op.Execution, v)
				}
			}
		}
	}
	return out
}

// sideRead reports whether a read is of a table other than the executions
// and the dedupe ledger, whose reads replica.go holds to each other already.
func sideRead(k Kind) bool {
	switch k {
	case KindPendingOutbox, KindPendingSpawns, KindDueTimers, KindReadTrace:
		return true
	}
	return false
}

// check holds one replica read to the floor of each execution it covers:
// the highest of its own lower bound, those of the same replica's reads that
// returned before it was called, and its replica's own acknowledged writes.
// A read of the executions or the ledger is held here only to what the
// other tables showed: replica.go holds it to its own answer, to the row
// reads before it and to its replica's own writes.
func (s *prefixState) check(op *Operation) {
	g := s.g
	self, marks := map[string]int64{}, s.side
	if sideRead(op.Kind) {
		self, marks = s.lows(op), s.marks
	}
	for _, exec := range s.covered(op) {
		f := prefixMark{v: self[exec], by: op}
		if e := marks.before(op.Replica, exec, op.Call); e.v > f.v {
			f = e
		}
		ownV, ownAt := int64(0), int64(-1)
		if op.ReadYourWrites && sideRead(op.Kind) {
			ownV, ownAt = s.own.before(op.Replica, exec, op.Call)
		}
		if f.v == 0 && ownV == 0 {
			continue
		}
		for _, floor := range []int64{f.v, ownV} {
			missed := s.misses(op, exec, floor)
			if missed == "" {
				continue
			}
			k := [3]string{op.Replica, exec, string(op.Kind)}
			if s.reported[k] {
				break
			}
			s.reported[k] = true
			switch {
			case floor == ownV && floor != f.v:
				g.rep.add(ErrReplicaRead, exec, "%s on %s %s, although commits through this replica had written v%d of %s, acknowledged at %dns (read-your-writes): no state the commits up to v%d produce",
					opAt(op), op.Replica, missed, ownV, exec, ownAt, ownV)
			case f.by == op:
				g.rep.add(ErrAtomicity, exec, "%s on %s shows %s at v%d or later (%s) but %s: a reader saw part of a commit",
					opAt(op), op.Replica, exec, f.v, shows(op), missed)
			default:
				g.rep.add(ErrReplicaRead, exec, "%s on %s %s, although the same replica had shown %s at v%d or later (%s, %s before it was called): no state a prefix of the commits produces, so the replica showed part of a commit or went back",
					opAt(op), op.Replica, missed, exec, f.v, opAt(f.by), since(op.Call-f.at))
			}
			break
		}
	}
}

// covered lists the executions a read says something of.
func (s *prefixState) covered(op *Operation) []string {
	if op.Kind.perExecution() {
		if s.g.chainOK[op.Execution] {
			return []string{op.Execution}
		}
		return nil
	}
	var out []string
	for _, exec := range s.g.execs {
		if s.g.chainOK[exec] {
			out = append(out, exec)
		}
	}
	return out
}

// shows names what a read showed, for messages.
func shows(op *Operation) string {
	switch op.Kind {
	case KindLoad, KindLoadForEvent:
		return "its row"
	case KindIsProcessed:
		return "the event processed"
	}
	return sideRows(op)
}

// misses says how the read shows less of exec than the winners up to
// floor wrote; "" when it does not.
func (s *prefixState) misses(op *Operation, exec string, floor int64) string {
	g := s.g
	if floor <= 0 {
		return ""
	}
	chain := g.atVer[exec]
	switch op.Kind {
	case KindLoad, KindLoadForEvent:
		v := int64(0)
		if op.Output.Exists {
			v = op.Output.Version
		}
		if v < floor {
			return fmt.Sprintf("shows %s at v%d", exec, v)
		}
		if op.Kind == KindLoadForEvent && !op.Output.Processed {
			if cv, ok := g.carrier(exec, op.Input.EventID); ok && cv <= floor {
				return fmt.Sprintf("says event %s, which v%d processed, is not processed", op.Input.EventID, cv)
			}
		}
	case KindIsProcessed:
		if cv, ok := g.carrier(exec, op.Input.EventID); ok && !op.Output.Processed && cv <= floor {
			return fmt.Sprintf("says event %s, which v%d processed, is not processed", op.Input.EventID, cv)
		}
	case KindPendingOutbox, KindPendingSpawns:
		return s.missesEntry(op, exec, floor)
	case KindDueTimers:
		return s.missesTimer(op, exec, floor)
	case KindReadTrace:
		return s.missesStep(op, exec, floor, chain)
	}
	return ""
}

// missesEntry finds a winner's outbox entry or spawn, at a version up to
// floor, that the read does not list and that no acknowledgement called
// before it returned may have removed.
func (s *prefixState) missesEntry(op *Operation, exec string, floor int64) string {
	spawn := op.Kind == KindPendingSpawns
	listed := map[string]bool{}
	for _, it := range op.Output.Outbox {
		listed[it.EventID] = true
	}
	for _, it := range op.Output.Spawns {
		listed[it.Child] = true
	}
	q := 0
	if spawn {
		q = 1
	}
	for _, e := range s.entries[exec] {
		if e.v > floor {
			break
		}
		if e.spawn != spawn || listed[e.key] {
			continue
		}
		if at, ok := s.removedBy[e.key]; ok && at < op.Return {
			continue
		}
		if !s.listedSeq[e.key] && s.unknownAck[q] < op.Return {
			continue // an acknowledgement of a seq never listed may have removed it
		}
		what := "outbox entry " + e.key
		if spawn {
			what = "spawn " + e.key
		}
		return fmt.Sprintf("does not list the %s that v%d of %s wrote (never acknowledged before it returned)", what, e.v, exec)
	}
	return ""
}

// missesTimer finds a path of exec whose timer the read shows older than
// the winners up to floor left it: a timer listed that a winner up to
// floor re-armed or cancelled, or none listed although every state from
// floor on holds a due timer there (no winner from floor on cancels it,
// arms it beyond now, or had it deleted by a delete_timer called before
// the read returned). The replica may be past floor, so a timer a later
// winner may have replaced is not missed.
func (s *prefixState) missesTimer(op *Operation, exec string, floor int64) string {
	g := s.g
	listed := map[string]DueTimerItem{}
	for _, t := range op.Output.Timers {
		if t.Execution == exec {
			listed[t.Path] = t
		}
	}
	for _, path := range sortedKeys(s.paths[exec]) {
		ops := s.paths[exec][path]
		i := sort.Search(len(ops), func(i int) bool { return ops[i].v > floor }) - 1
		if i < 0 {
			continue
		}
		last := ops[i]
		if t, shown := listed[path]; shown {
			o, ok := g.fires[timerKey{exec, path, t.FireAt}]
			if v, won := g.winner[o.op]; ok && won && v < last.v {
				return fmt.Sprintf("lists timer %s/%s at fire_at %v as v%d set it, which v%d re-armed or cancelled", exec, path, t.FireAt, v, last.v)
			}
			continue
		}
		may := false // some state from floor on holds no due timer there
		for _, o := range ops[i:] {
			may = may || !o.schedule || o.fireAt > op.Input.Now || s.deleted(exec, path, o.fireAt, op.Return)
		}
		if !may {
			return fmt.Sprintf("does not list timer %s/%s (fire_at %v, due at %v) that v%d scheduled", exec, path, last.fireAt, op.Input.Now, last.v)
		}
	}
	return ""
}

// deleted reports whether a delete_timer of the timer called before t may
// have removed it.
func (s *prefixState) deleted(exec, path string, fireAt float64, t int64) bool {
	for _, d := range s.deletes[timerKey{exec, path, fireAt}] {
		if d.Call < t {
			return true
		}
	}
	return false
}

// missesStep finds a winner's trace step, at a version up to floor, newer
// than the newest winner's step the read lists: the ring is a contiguous
// tail, so once it reaches back to that step it holds every newer one.
func (s *prefixState) missesStep(op *Operation, exec string, floor int64, chain []*Operation) string {
	g := s.g
	newest := int64(0)
	for _, it := range op.Output.Trace {
		if o := g.traces[it.Entry]; o != nil && o.Kind.IsCommit() && o.Execution == exec {
			newest = max(newest, g.winner[o])
		}
	}
	if newest == 0 {
		return ""
	}
	for _, v := range s.steps[exec] {
		if v > newest && v <= floor {
			return fmt.Sprintf("lists the trace step of v%d but not that of v%d (%s)", newest, v, short(chain[v].Input.Trace))
		}
	}
	return ""
}
