package linearizability

import (
	"fmt"
	"strings"
)

// describeOperation renders one operation for porcupine's visualization,
// e.g. "c3 commit(e1, v4→5, w=c3-17) → ok".
func describeOperation(op *Operation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "c%d %s(%s", op.Client, op.Kind, op.Execution)
	in := &op.Input
	switch op.Kind {
	case KindCommit, KindSave:
		fmt.Fprintf(&b, ", v%d→%d, w=%s", in.Expected, in.Expected+1, short(in.Data))
		if in.EventID != "" {
			fmt.Fprintf(&b, ", p=%s", in.EventID)
		}
		if n := len(in.Emits); n > 0 {
			fmt.Fprintf(&b, ", %d emits", n)
		}
		if in.Trace != "" {
			b.WriteString(", +trace")
		}
	case KindLoadForEvent, KindIsProcessed:
		fmt.Fprintf(&b, ", %s", in.EventID)
	case KindAppendTrace:
		fmt.Fprintf(&b, ", %s", short(in.Trace))
	}
	b.WriteString(") → ")
	b.WriteString(describeOutput(op))
	return b.String()
}

func describeOutput(op *Operation) string {
	out := &op.Output
	switch out.Outcome {
	case OutcomeConflict:
		if out.Found == nil {
			return "conflict(found none)"
		}
		return fmt.Sprintf("conflict(found v%d)", *out.Found)
	case OutcomeIndeterminate:
		return "? (indeterminate)"
	case OutcomeFailed:
		return "failed"
	}
	switch op.Kind {
	case KindLoad:
		return describeRow(out)
	case KindLoadForEvent:
		if out.Processed {
			return describeRow(out) + ", processed"
		}
		return describeRow(out) + ", not processed"
	case KindIsProcessed:
		return fmt.Sprint(out.Processed)
	case KindReadTrace:
		return describeTrace(out.Trace)
	}
	return "ok"
}

func describeRow(out *Output) string {
	if !out.Exists {
		return "none"
	}
	return fmt.Sprintf("v%d %s", out.Version, short(out.Data))
}

// describeTrace shows a ring as its index range and at most its first two
// and last two entries.
func describeTrace(items []TraceItem) string {
	if len(items) == 0 {
		return "[]"
	}
	var ids []string
	for i, it := range items {
		if len(items) > 4 && i == 2 {
			ids = append(ids, "…")
		}
		if len(items) <= 4 || i < 2 || i >= len(items)-2 {
			ids = append(ids, short(it.Entry))
		}
	}
	return fmt.Sprintf("[%d..%d] %s", items[0].Index, items[len(items)-1].Index, strings.Join(ids, " "))
}

// describeState renders a partition's state. A state is shown as its
// register or its ring, whichever the partition uses; the initial state of
// both is "none".
func describeState(s state) string {
	switch {
	case s.next > 0:
		var ids []string
		n := s.ring
		for i := 0; i < 3 && n != nil; i++ {
			ids = append([]string{short(n.val)}, ids...)
			n = n.next
		}
		if n != nil {
			ids = append([]string{"…"}, ids...)
		}
		return fmt.Sprintf("%d appended: %s", s.next, strings.Join(ids, " "))
	case s.exists:
		return fmt.Sprintf("v%d %s, %d processed", s.version, short(s.data), s.nproc)
	}
	return "none"
}
