package linearizability

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// A queue lists its entries by seq, and a seq is taken when the commit that
// writes the entry takes effect (an AUTOINCREMENT inside its transaction,
// docs/CONTRACT.md §1 property 6, "in order"): the queue is one order of
// all the winners' entries, the order the commits took effect in. What a
// history shows of that order: a winner that took effect before another was
// called comes first (real time); so does one that took effect before an
// operation found the other's execution below the other's version (a load,
// or a commit's compare-and-swap, which the other had not taken effect
// before), or before a read of the queue listed the first and not the
// other's entries (queueReadOrder). Two commits whose intervals overlap,
// and that nothing else orders, may take effect, and number their entries,
// either way.

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
	after        int64 // when it surely had not yet (notTakenAt)
	afterBy      *Operation
	lo, hi       int64
	loKey, hiKey string
	seen         bool // a read showed one of its entries: lo and hi are set
}

// queueRealTime checks that, across executions, a winner that surely took
// effect (takenBy: its return, or the return of a read that showed it)
// before another winner surely had not (notTakenAt: its call, or the call
// of a load or commit that found its execution below its version) has
// every entry at a lower seq than every entry of the other. One sweep over
// the winners in that order keeps the highest seq of those taken before,
// from two executions (the same execution's pairs are queueOrder's):
// O(n log n). One violation is reported per execution of the later commit.
func (g *globalChecker) queueRealTime(q *queueState) {
	spans := make([]seqSpan, 0, len(g.winner))
	for op := range g.winner {
		s := seqSpan{op: op, taken: g.takenBy(op)}
		s.after, s.afterBy = g.notTakenAt(op)
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
	byAfter := slices.Clone(spans)
	slices.SortFunc(byAfter, func(a, b seqSpan) int { return cmp.Or(cmp.Compare(a.after, b.after), cmp.Compare(a.lo, b.lo)) })
	byTaken := spans
	slices.SortFunc(byTaken, func(a, b seqSpan) int { return cmp.Or(cmp.Compare(a.taken, b.taken), cmp.Compare(a.lo, b.lo)) })
	var top, other *seqSpan // the highest hi taken so far; the highest of another execution than top's
	next := 0
	reported := map[string]bool{}
	for i := range byAfter {
		b := &byAfter[i]
		for next < len(byTaken) && byTaken[next].taken < b.after {
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
		when := fmt.Sprintf("%s %s was called", b.op.Kind, Token(b.op.Input.Data))
		if b.afterBy != nil {
			when = fmt.Sprintf("%s, which found %s below v%d, was called", describeBelow(b.afterBy), b.op.Execution, g.winner[b.op])
		}
		g.rep.add(ErrDeliveryOrder, b.op.Execution, "%s %s of %s has seq %d, below seq %d of %s %s of %s, which took effect %s before %s: the queue lists a later commit's entries before an earlier one's",
			q.spec.entry, b.loKey, name(b.op), b.lo, a.hi, q.spec.entry, a.hiKey, name(a.op), time.Duration(max(b.after-a.taken, 0)).Round(time.Microsecond), when)
	}
}

// shownSeq is an entry a read of the primary listed, with the commit that
// wrote it.
type shownSeq struct {
	seq   int64
	key   string
	owner *Operation
	read  *Operation
}

// highest is the highest seq a set of reads listed, and the highest of
// another commit than top's: the entry an absent one of top's own commit
// cannot be held against (that is a partial commit, partial()'s).
type highest struct{ top, other *shownSeq }

// add takes one more listed entry into h.
func (h highest) add(s *shownSeq) highest {
	switch {
	case h.top == nil || s.seq > h.top.seq:
		if h.top != nil && h.top.owner != s.owner {
			h.other = h.top
		}
		h.top = s
	case s.owner != h.top.owner && (h.other == nil || s.seq > h.other.seq):
		h.other = s
	}
	return h
}

// above returns the entry of h of another commit than op, if its seq is
// above seq; nil otherwise.
func (h highest) above(op *Operation, seq int64) *shownSeq {
	s := h.top
	if s != nil && s.owner == op {
		s = h.other
	}
	if s == nil || s.seq <= seq {
		return nil
	}
	return s
}

// queueReadOrder checks the queue order that the reads show, beyond real
// time: a read of the primary that returned before any read listed an entry
// (and before any acknowledgement of its seq was called) was served before
// the entry's commit took effect, so every entry that read listed belongs to
// a commit that took effect first, and must have a lower seq. This catches a
// store that numbers entries before its commit takes effect (seqs taken
// before the transaction, or outside it), where the two commits overlap and
// queueRealTime can tell nothing. It holds for stale reads too, since a
// store's state lists every entry below its highest seq until acknowledged.
// O((reads + entries) log reads); one violation per execution of the later
// commit.
func (g *globalChecker) queueReadOrder(q *queueState) {
	firstCall := map[string]int64{} // q.reads are in call order
	for _, r := range q.reads {
		for _, it := range q.spec.items(r) {
			if _, ok := firstCall[it.key]; !ok {
				firstCall[it.key] = r.Call
			}
		}
	}
	byReturn := slices.Clone(q.reads)
	slices.SortStableFunc(byReturn, func(a, b *Operation) int { return cmp.Compare(a.returnTime(), b.returnTime()) })
	returns := make([]int64, len(byReturn))
	prefix := make([]highest, len(byReturn)) // prefix[i]: reads byReturn[:i+1]
	var h highest
	for i, r := range byReturn {
		for _, it := range q.spec.items(r) {
			if o, ok := q.spec.owners[it.key]; ok {
				h = h.add(&shownSeq{seq: it.seq, key: it.key, owner: o.op, read: r})
			}
		}
		returns[i], prefix[i] = r.returnTime(), h
	}
	keys := slices.Sorted(maps.Keys(firstCall))
	reported := map[string]bool{}
	for _, k := range keys {
		o, ok := q.spec.owners[k]
		if !ok || reported[o.op.Execution] {
			continue
		}
		if _, won := g.winner[o.op]; !won {
			continue
		}
		seq := q.seqOf[k]
		bound := firstCall[k]
		for _, a := range q.acks[seq] {
			bound = min(bound, a.Call)
		}
		n, _ := slices.BinarySearch(returns, bound) // reads that returned before bound
		if n == 0 {
			continue
		}
		s := prefix[n-1].above(o.op, seq)
		if s == nil {
			continue
		}
		reported[o.op.Execution] = true
		g.rep.add(ErrDeliveryOrder, o.op.Execution, "%s %s of %s has seq %d, below seq %d of %s %s of %s, which %s listed without it, %s before any read listed it: its commit took effect after the other's, and the queue lists it first",
			q.spec.entry, k, name(o.op), seq, s.seq, q.spec.entry, s.key, name(s.owner), opAt(s.read), since(firstCall[k]-s.read.returnTime()))
	}
}

// describeBelow names the operation that found an execution below a
// winner's version.
func describeBelow(op *Operation) string {
	if op.Kind.IsCommit() {
		return name(op)
	}
	return opAt(op)
}
