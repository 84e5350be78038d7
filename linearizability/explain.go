package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// staleRead is the plainest explanation of a register history with no
// linearization: a read that returned a version older than one the store
// had already shown (an acknowledged write, a conflict naming it, or an
// earlier completed read) before the read was called.
type staleRead struct {
	read  *Operation // the read that went back
	shown *Operation // the operation that had shown the newer version
	newer int64      // the version shown
}

// findStaleRead returns the earliest such read among one execution's
// operations that porcupine checks (reads served by a replica are judged
// by the replica rules instead), or nil when the failure is of another
// kind (a lost update, a wrong conflict).
func findStaleRead(ops []Operation, exec string) *staleRead {
	var reads, shown []*Operation
	for i := range ops {
		op := &ops[i]
		if op.Execution != exec {
			continue
		}
		if _, ok := shownVersion(op); ok && op.Return != EndOfHistory {
			shown = append(shown, op)
		}
		if (op.Kind == KindLoad || op.Kind == KindLoadForEvent) && op.Output.Outcome == OutcomeOK && op.Replica == "" && !op.Heal {
			reads = append(reads, op)
		}
	}
	slices.SortStableFunc(shown, func(a, b *Operation) int { return cmp.Compare(a.Return, b.Return) })
	slices.SortStableFunc(reads, func(a, b *Operation) int { return cmp.Compare(a.Call, b.Call) })
	var top *Operation // of the operations returned so far, the one that showed the newest version
	topV, next := int64(0), 0
	for _, r := range reads {
		for ; next < len(shown) && shown[next].Return < r.Call; next++ {
			if v, _ := shownVersion(shown[next]); top == nil || v > topV {
				top, topV = shown[next], v
			}
		}
		got := int64(0)
		if r.Output.Exists {
			got = r.Output.Version
		}
		if top != nil && topV > got {
			return &staleRead{read: r, shown: top, newer: topV}
		}
	}
	return nil
}

// shownVersion is the version an operation showed the store held when it
// returned: a write's new version, a conflict's found version, a read's.
func shownVersion(op *Operation) (int64, bool) {
	if op.Replica != "" && !op.Kind.IsWrite() {
		return 0, false
	}
	switch {
	case op.Output.Outcome == OutcomeOK && (op.Kind == KindCommit || op.Kind == KindSave):
		return op.Input.Expected + 1, true
	case op.Output.Outcome == OutcomeConflict && op.Output.Found != nil:
		return *op.Output.Found, true
	case op.Output.Outcome == OutcomeOK && (op.Kind == KindLoad || op.Kind == KindLoadForEvent) && op.Output.Exists:
		return op.Output.Version, true
	}
	return 0, false
}

// describe says what happened, with the times from the start of the run.
func (s *staleRead) describe() string {
	got := "no row"
	if s.read.Output.Exists {
		got = fmt.Sprintf("v%d", s.read.Output.Version)
	}
	how := "was acknowledged"
	switch {
	case s.shown.Output.Outcome == OutcomeConflict:
		how = "was named by a conflict"
	case !s.shown.Kind.IsWrite():
		how = "had been read"
	}
	return fmt.Sprintf("stale read: c%d %s called at %s returned %s, but v%d %s %s earlier (c%d %s returned at %s)",
		s.read.Client, s.read.Kind, at(s.read.Call), got, s.newer, how, ms(s.read.Call-s.shown.Return), s.shown.Client, s.shown.Kind, at(s.shown.Return))
}

func at(ns int64) string { return fmt.Sprintf("%.3fs", time.Duration(ns).Seconds()) }
func ms(ns int64) string { return fmt.Sprintf("%.0f ms", float64(ns)/1e6) }
