package linearizability

import (
	"testing"

	"pgregory.net/rapid"
)

// TestAckIndexIsTheScan: the index answers what scanning the chain above v
// answers — the highest version acknowledged before t, and the earliest
// acknowledgement among those — for chains with gaps, failed winners and
// acknowledgements out of version order.
func TestAckIndexIsTheScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 30).Draw(t, "versions")
		chain := make([]*Operation, n+1)
		for v := 1; v <= n; v++ {
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0: // unknown winner
			case 1:
				chain[v] = &Operation{Output: Output{Outcome: OutcomeIndeterminate}, Return: rapid.Int64Range(0, 100).Draw(t, "ret")}
			default:
				chain[v] = &Operation{Output: Output{Outcome: OutcomeOK}, Return: rapid.Int64Range(0, 100).Draw(t, "ret")}
			}
		}
		x := newAckIndex(chain)
		v := rapid.Int64Range(0, int64(n)).Draw(t, "v")
		at := rapid.Int64Range(0, 110).Draw(t, "t")
		wantAcked, wantFirst := int64(0), EndOfHistory
		for w := v + 1; w <= int64(n); w++ {
			if c := chain[w]; c != nil && c.Output.Outcome == OutcomeOK && c.Return < at {
				wantAcked, wantFirst = w, min(wantFirst, c.Return)
			}
		}
		acked, first := x.above(v, at)
		if acked != wantAcked || (acked != 0 && first != wantFirst) {
			t.Fatalf("above(%d, %d) = %d, %d; the scan says %d, %d", v, at, acked, first, wantAcked, wantFirst)
		}
	})
}
