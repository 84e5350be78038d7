package linearizability

import "fmt"

// Removed entries on replicas. The prefix rules (prefix.go) hold a replica's
// reads to what they miss; these hold them to what they list that an
// acknowledgement or a delete_timer had removed. A queue entry (outbox or
// spawn) that an ack_outbox or ack_spawn of its seq removed, or a timer that
// a delete_timer of its fire_at removed, is gone from every state of the
// primary after that call returned, for good: seqs are never reused, and a
// fire_at witnesses one commit. So a replica read lists it only from a state
// before the removal, and that is no prefix state:
//
//   - with read-your-writes, when the removal went through the same
//     replica and returned before the read was called (the replica's own
//     acknowledged write);
//   - when the replica had shown, before the read was called or in the
//     read itself, a winner whose commit was called only after the removal
//     returned: that winner took effect after the removal, so a state
//     holding it holds the removal too.
//
// A removal counts only when the entry's own commit had returned before the
// removal was called (an ack of a seq not yet written removes nothing) and
// the removal returned ok.

// removedState indexes the removals of one history.
type removedState struct {
	g *globalChecker
	// acks are the ok acknowledgements per queue (0 outbox, 1 spawns) and
	// seq; deletes the ok delete_timer calls per timer.
	acks    [2]map[int64][]*Operation
	deletes map[timerKey][]*Operation
	// lastCall is, per execution, the running maximum of its winners'
	// calls by version: the latest call of a winner a state at v holds.
	lastCall map[string][]int64
}

func newRemovedState(g *globalChecker) *removedState {
	s := &removedState{g: g, acks: [2]map[int64][]*Operation{{}, {}}, deletes: map[timerKey][]*Operation{}, lastCall: map[string][]int64{}}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Output.Outcome != OutcomeOK {
			continue
		}
		switch op.Kind {
		case KindAckOutbox:
			s.acks[0][op.Input.Seq] = append(s.acks[0][op.Input.Seq], op)
		case KindAckSpawn:
			s.acks[1][op.Input.Seq] = append(s.acks[1][op.Input.Seq], op)
		case KindDeleteTimer:
			k := timerKey{op.Execution, op.Input.Path, op.Input.FireAt}
			s.deletes[k] = append(s.deletes[k], op)
		}
	}
	for _, exec := range g.execs {
		if !g.chainOK[exec] {
			continue
		}
		chain := g.atVer[exec]
		calls := make([]int64, len(chain))
		for v, w := range chain {
			if v > 0 {
				calls[v] = calls[v-1]
			}
			if w != nil {
				calls[v] = max(calls[v], w.Call)
			}
		}
		s.lastCall[exec] = calls
	}
	return s
}

// latest is the latest call of a winner of exec up to version v; -1 when
// none is known.
func (s *removedState) latest(exec string, v int64) int64 {
	calls := s.lastCall[exec]
	if v <= 0 || len(calls) == 0 {
		return -1
	}
	return calls[min(v, int64(len(calls)-1))]
}

// check holds one replica read of the outbox, the spawns or the due timers
// to the removals; marks are every replica read's lower bounds (prefix.go),
// self the read's own.
func (s *removedState) check(op *Operation, marks prefixMarks, self map[string]int64) {
	g := s.g
	// shown: the latest call of a winner the replica's state at the read
	// holds, and the read that showed it.
	shown, by := int64(-1), (*Operation)(nil)
	for _, exec := range g.execs {
		v, who := self[exec], op
		if m := marks.before(op.Replica, exec, op.Call); m.v > v {
			v, who = m.v, m.by
		}
		if c := s.latest(exec, v); c > shown {
			shown, by = c, who
		}
	}
	report := func(exec, what string, rm *Operation) bool {
		own := op.ReadYourWrites && rm.Replica == op.Replica && rm.Return < op.Call
		if own {
			g.rep.add(ErrReplicaRead, exec, "%s on %s lists %s, which %s through this replica removed, acknowledged at %dns before the read was called (read-your-writes)",
				opAt(op), op.Replica, what, opAt(rm), rm.Return)
			return true
		}
		if shown > rm.Return {
			g.rep.add(ErrReplicaRead, exec, "%s on %s lists %s, which %s removed (returned at %dns), although the replica had shown a commit called after that (%s): no state a prefix of the primary's history produces",
				opAt(op), op.Replica, what, opAt(rm), rm.Return, opAt(by))
			return true
		}
		return false
	}
	// first finds the removal that proves most: one of the replica's own,
	// else the earliest to return.
	first := func(ops []*Operation, written int64) *Operation {
		var out *Operation
		for _, rm := range ops {
			if rm.Call <= written {
				continue
			}
			if op.ReadYourWrites && rm.Replica == op.Replica && rm.Return < op.Call {
				return rm
			}
			if out == nil || rm.Return < out.Return {
				out = rm
			}
		}
		return out
	}
	switch op.Kind {
	case KindPendingOutbox, KindPendingSpawns:
		q, items := 0, make([][2]any, 0)
		if op.Kind == KindPendingSpawns {
			q = 1
			for _, it := range op.Output.Spawns {
				items = append(items, [2]any{it.Child, it.Seq})
			}
		} else {
			for _, it := range op.Output.Outbox {
				items = append(items, [2]any{it.EventID, it.Seq})
			}
		}
		for _, it := range items {
			key, seq := it[0].(string), it[1].(int64)
			o, ok := g.emits[key]
			if q == 1 {
				o, ok = g.spawns[key]
			}
			if !ok {
				continue
			}
			if _, won := g.winner[o.op]; !won {
				continue
			}
			rm := first(s.acks[q][seq], o.op.Return)
			if rm == nil {
				continue
			}
			what := "outbox entry " + key
			if q == 1 {
				what = "spawn " + key
			}
			if report(o.op.Execution, what+fmt.Sprintf(" (seq %d)", seq), rm) {
				return
			}
		}
	case KindDueTimers:
		for _, t := range op.Output.Timers {
			k := timerKey{t.Execution, t.Path, t.FireAt}
			o, ok := g.fires[k]
			if !ok {
				continue
			}
			if _, won := g.winner[o.op]; !won {
				continue
			}
			rm := first(s.deletes[k], o.op.Return)
			if rm == nil {
				continue
			}
			if report(t.Execution, "timer "+t.Execution+"/"+t.Path+fmt.Sprintf(" at fire_at %v", t.FireAt), rm) {
				return
			}
		}
	}
}
