package linearizability

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestIDFilterKeepsEveryID: every id added is reported as maybe present
// (a false "no" would leave a seen append unsettled), and most ids never
// added are not (else the filter saves nothing).
func TestIDFilterKeepsEveryID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.SliceOf(rapid.String()).Draw(t, "ids")
		var f idFilter
		for _, id := range ids {
			f.add(id)
		}
		for _, id := range ids {
			if !f.has(id) {
				t.Fatalf("%q was added but the filter says it was not", id)
			}
		}
	})
	var f idFilter
	for i := range 1000 {
		f.add(fmt.Sprintf("s%d-%d#%08x", i%20, i, uint32(i)*2654435761))
	}
	maybe := 0
	for i := 1000; i < 101000; i++ {
		if f.has(fmt.Sprintf("s%d-%d#%08x", i%20, i, uint32(i)*2654435761)) {
			maybe++
		}
	}
	if maybe > 5000 { // 1,000 ids set at most 1.5% of the 65,536 bits
		t.Errorf("%d of 100,000 ids never added pass the filter", maybe)
	}
}

// TestUnseenAppendSitsBelowTheListedEntries: an indeterminate append no
// read lists may explain why a read's indices moved up by one only if it
// can sit below the oldest entry the read lists: called before that
// entry's append returned. One called after it would be the newest entry
// and listed; the history below, of a ring whose first index is 1, passed
// before (found by the checker review).
func TestUnseenAppendSitsBelowTheListedEntries(t *testing.T) {
	app := func(c int, entry string, call, ret int64, out Outcome) Operation {
		if out == OutcomeIndeterminate {
			ret = EndOfHistory
		}
		return Operation{Client: c, Kind: KindAppendTrace, Execution: "e1", Input: Input{Trace: entry}, Output: Output{Outcome: out}, Call: call, Return: ret}
	}
	read := func(c int, call, ret int64, heal bool) Operation {
		return Operation{Client: c, Kind: KindReadTrace, Execution: "e1", Heal: heal, Call: call, Return: ret,
			Output: Output{Outcome: OutcomeOK, Trace: []TraceItem{{Index: 2, Entry: "A1"}, {Index: 3, Entry: "A2"}}}}
	}
	for _, c := range []struct {
		name  string
		xCall int64 // when the unseen append X was called
		want  error
	}{
		{"called after the listed entries", 70, ErrTraceRing},
		{"called before the oldest listed entry returned", 25, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := History{Meta: Meta{TraceMax: 2}, Ops: []Operation{
				app(1, "A0", 10, 20, OutcomeOK), app(1, "A1", 30, 40, OutcomeOK), app(1, "A2", 50, 60, OutcomeOK),
				app(2, "X", c.xCall, 0, OutcomeIndeterminate), read(3, 80, 90, false), read(99, 1000, 1001, true),
			}}
			wantVerdict(t, h, c.want)
		})
	}
}
