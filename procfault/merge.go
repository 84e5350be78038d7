package procfault

import (
	"cmp"
	"slices"
	"time"

	"github.com/storecheck/storecheck/linearizability"
)

// The common clock. Every process of a writer-stall run stamps its
// operations in nanoseconds since one instant: the parent's base, read from
// its wall clock (time.Now().UnixNano()) and passed to every worker. A worker
// reads its own wall clock once, turns the parent's reading into a time on
// its monotonic clock (linearizability.SharedBase), and from then on stamps
// monotonic differences only. The parent stamps its heal reads from the base
// itself.
//
// Why this clock: on one Linux host every process reads the same
// CLOCK_REALTIME and the same CLOCK_MONOTONIC, and the two advance at the
// same NTP-slewed rate, so one wall-clock reading per process maps its
// monotonic stamps onto the shared timeline with no drift. The monotonic
// clock alone cannot be used: Go exposes it only as differences within one
// process. The one thing that can break the mapping is a step of the wall
// clock (settimeofday, a VM resuming) between the parent's reading and a
// worker's; the parent detects it by comparing its own wall and monotonic
// elapsed times at the end (clockStep) and then refuses to judge the run.

// maxClockStep is the disagreement between the wall and monotonic clocks
// beyond which the merged history's times are not trusted.
const maxClockStep = 2 * time.Millisecond

// clockStep returns how far the wall clock moved against the monotonic
// clock since base: zero unless the wall clock was stepped.
func clockStep(base time.Time) time.Duration {
	wall := time.Duration(time.Now().UnixNano() - base.UnixNano())
	return wall - time.Since(base)
}

// mergeHistories joins the histories of several processes, recorded on the
// common clock, into one: client ids renumbered so that no two processes
// share one, operations ordered by the time they returned (an indeterminate
// one by the time its error came back), as one Recorder would have them.
// It returns the merged history and, for each operation, which process
// recorded it.
func mergeHistories(meta linearizability.Meta, parts [][]linearizability.Operation) (linearizability.History, []int) {
	type tagged struct {
		op   linearizability.Operation
		part int
	}
	var all []tagged
	next := 0
	for p, ops := range parts {
		ids := map[int]int{}
		for _, op := range ops {
			id, ok := ids[op.Client]
			if !ok {
				id, next = next, next+1
				ids[op.Client] = id
			}
			op.Client = id
			all = append(all, tagged{op, p})
		}
	}
	slices.SortStableFunc(all, func(a, b tagged) int { return cmp.Compare(returned(a.op), returned(b.op)) })
	h := linearizability.History{Meta: meta, Ops: make([]linearizability.Operation, len(all))}
	from := make([]int, len(all))
	for i, t := range all {
		h.Ops[i], from[i] = t.op, t.part
	}
	return h, from
}

// returned is when the recorder saw op end.
func returned(op linearizability.Operation) int64 {
	if op.Output.Outcome == linearizability.OutcomeIndeterminate {
		return op.Output.Observed
	}
	return op.Return
}
