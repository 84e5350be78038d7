package linearizability

import (
	"cmp"
	"slices"
	"sort"
)

// ackIndex answers, for one execution's chain of winners, "which versions
// above v had been acknowledged before t": the highest such version, and
// the earliest acknowledgement among all versions above v. A replica load's
// staleness asks it once per load; scanning the chain each time was
// quadratic in its length.
type ackIndex struct {
	// byReturn are the acknowledged winners' returns, in increasing
	// order, and highest[i] the highest version among the first i+1.
	byReturn []int64
	highest  []int64
	// earliest[v] is the earliest return of an acknowledged winner at v or
	// above (EndOfHistory when none).
	earliest []int64
}

// newAckIndex indexes chain (chain[v] is the winner at v, nil where
// unknown).
func newAckIndex(chain []*Operation) *ackIndex {
	type ack struct{ ret, v int64 }
	var acks []ack
	x := &ackIndex{earliest: make([]int64, len(chain)+1)}
	x.earliest[len(chain)] = EndOfHistory
	for v := len(chain) - 1; v >= 0; v-- {
		x.earliest[v] = x.earliest[v+1]
		if c := chain[v]; v >= 1 && c != nil && c.Output.Outcome == OutcomeOK {
			acks = append(acks, ack{c.Return, int64(v)})
			x.earliest[v] = min(x.earliest[v], c.Return)
		}
	}
	slices.SortFunc(acks, func(a, b ack) int { return cmp.Compare(a.ret, b.ret) })
	x.byReturn, x.highest = make([]int64, len(acks)), make([]int64, len(acks))
	for i, a := range acks {
		x.byReturn[i], x.highest[i] = a.ret, a.v
		if i > 0 {
			x.highest[i] = max(x.highest[i], x.highest[i-1])
		}
	}
	return x
}

// above returns the highest version above v acknowledged before t and the
// earliest acknowledgement of a version above v; acked 0 when none above v
// was acknowledged before t.
func (x *ackIndex) above(v, t int64) (acked, first int64) {
	n := sort.Search(len(x.byReturn), func(i int) bool { return x.byReturn[i] >= t })
	if n == 0 || x.highest[n-1] <= v {
		return 0, EndOfHistory
	}
	// Some version above v returned before t, so the earliest return of
	// any version above v is before t too.
	return x.highest[n-1], x.earliest[min(v+1, int64(len(x.earliest)-1))]
}
