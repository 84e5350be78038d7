package linearizability

import (
	"cmp"
	"slices"
	"time"
)

// A queue lists its entries by seq, and a seq is taken when the commit that
// writes the entry takes effect (an AUTOINCREMENT inside its transaction,
// docs/CONTRACT.md §1 property 6, "in order"): the queue is one order of
// all the winners' entries, the order the commits took effect in. What a
// history shows of that order is its real-time part: a winner that took
// effect before another was called comes first; two commits whose
// intervals overlap may take effect, and number their entries, either way.

// queueOrder checks that, within one execution, the seqs of the winners'
// entries ascend in (version, batch position) order.
func (g *globalChecker) queueOrder(q *queueState) {
	for _, exec := range g.execs {
		chain := g.atVer[exec]
		var lastKey string
		var lastOp *Operation
		last := int64(-1 << 63)
	versions:
		for v := 1; v < len(chain); v++ {
			for _, k := range q.spec.keys(chain[v]) {
				seq, seen := q.seqOf[k]
				if !seen {
					continue
				}
				if seq <= last {
					g.rep.add(ErrDeliveryOrder, exec, "%s %s of %s has seq %d, not after seq %d of %s %s of %s",
						q.spec.entry, k, name(chain[v]), seq, last, q.spec.entry, lastKey, name(lastOp))
					break versions
				}
				last, lastKey, lastOp = seq, k, chain[v]
			}
		}
	}
}

// seqSpan is a winner and the lowest and highest seqs the reads showed of
// its entries.
type seqSpan struct {
	op           *Operation
	taken        int64 // by when it surely took effect (takenBy)
	lo, hi       int64
	loKey, hiKey string
	seen         bool // a read showed one of its entries: lo and hi are set
}

// queueRealTime checks that, across executions, a winner that surely took
// effect (takenBy: its return, or the return of a read that showed it)
// before another winner was called has every entry at a lower seq than
// every entry of the other. One sweep over the winners in call order keeps
// the highest seq of those taken before the call, from two executions
// (the same execution's pairs are queueOrder's): O(n log n). One violation
// is reported per execution of the later commit.
func (g *globalChecker) queueRealTime(q *queueState) {
	spans := make([]seqSpan, 0, len(g.winner))
	for op := range g.winner {
		s := seqSpan{op: op, taken: g.takenBy(op)}
		for _, k := range q.spec.keys(op) {
			seq, seen := q.seqOf[k]
			if !seen {
				continue
			}
			if !s.seen || seq < s.lo {
				s.lo, s.loKey = seq, k
			}
			if !s.seen || seq > s.hi {
				s.hi, s.hiKey = seq, k
			}
			s.seen = true
		}
		if s.seen {
			spans = append(spans, s)
		}
	}
	if len(spans) < 2 {
		return
	}
	byCall := slices.Clone(spans)
	slices.SortFunc(byCall, func(a, b seqSpan) int { return cmp.Or(cmp.Compare(a.op.Call, b.op.Call), cmp.Compare(a.lo, b.lo)) })
	byTaken := spans
	slices.SortFunc(byTaken, func(a, b seqSpan) int { return cmp.Or(cmp.Compare(a.taken, b.taken), cmp.Compare(a.lo, b.lo)) })
	var top, other *seqSpan // the highest hi taken so far; the highest of another execution than top's
	next := 0
	reported := map[string]bool{}
	for i := range byCall {
		b := &byCall[i]
		for next < len(byTaken) && byTaken[next].taken < b.op.Call {
			a := &byTaken[next]
			next++
			switch {
			case top == nil || a.hi > top.hi:
				if top != nil && top.op.Execution != a.op.Execution {
					other = top
				}
				top = a
			case a.op.Execution != top.op.Execution && (other == nil || a.hi > other.hi):
				other = a
			}
		}
		a := top
		if a != nil && a.op.Execution == b.op.Execution {
			a = other
		}
		if a == nil || a.hi < b.lo || reported[b.op.Execution] {
			continue
		}
		reported[b.op.Execution] = true
		g.rep.add(ErrDeliveryOrder, b.op.Execution, "%s %s of %s has seq %d, below seq %d of %s %s of %s, which took effect %s before %s %s was called: the queue lists a later commit's entries before an earlier one's",
			q.spec.entry, b.loKey, name(b.op), b.lo, a.hi, q.spec.entry, a.hiKey, name(a.op), time.Duration(max(b.op.Call-a.taken, 0)).Round(time.Microsecond), b.op.Kind, Token(b.op.Input.Data))
	}
}
