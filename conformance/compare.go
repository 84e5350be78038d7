package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/storecheck/storecheck/model"
)

// The comparisons below return nil when the store under test answered as the
// reference did, and otherwise an error naming what differs.

// sameWriteOutcome compares the errors of one write on the reference (want)
// and on the store (got).
func sameWriteOutcome(want, got error) error {
	wc, wantConflict := model.AsConflict(want)
	gc, gotConflict := model.AsConflict(got)
	switch {
	case want == nil && got == nil:
		return nil
	case want == nil:
		return fmt.Errorf("the reference accepted the write, the store failed it: %w", got)
	case wantConflict && !gotConflict:
		if got == nil {
			return fmt.Errorf("lost update: the reference reports %v, the store accepted the write", wc)
		}
		return fmt.Errorf("the reference reports %v, the store failed with an error that is not a StoreConflict: %w", wc, got)
	case wantConflict:
		if gc.ID != wc.ID || gc.Expected != wc.Expected || !reflect.DeepEqual(gc.Found, wc.Found) {
			return fmt.Errorf("conflict details differ: want %v, got %v", wc, gc)
		}
		return nil
	case got == nil:
		return fmt.Errorf("the reference rejected the write (%v), the store accepted it", want)
	default:
		return nil // both rejected it as invalid
	}
}

// sameExecution compares two loaded executions through their canonical JSON.
func sameExecution(want, got *model.Execution) error {
	if want == nil || got == nil {
		if want != got {
			return fmt.Errorf("want %s, got %s", describeExecution(want), describeExecution(got))
		}
		return nil
	}
	w, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("encode reference execution: %w", err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		return fmt.Errorf("encode store execution: %w", err)
	}
	if string(w) != string(g) {
		return fmt.Errorf("want %s, got %s", w, g)
	}
	return nil
}

func describeExecution(e *model.Execution) string {
	if e == nil {
		return "none"
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Sprintf("unencodable execution %q: %v", e.ID, err)
	}
	return string(b)
}

// sameOutbox compares pending outbox lists: the same entries in the same
// order, and the store's seqs strictly ascending.
func sameOutbox(want, got []model.OutboxEntry) error {
	if err := ascending("pending outbox", got, func(e model.OutboxEntry) int64 { return e.Seq }); err != nil {
		return err
	}
	return sameList("pending outbox", want, got, func(e model.OutboxEntry) string {
		ev, err := e.Event.Canonical()
		if err != nil {
			ev = fmt.Sprintf("unencodable event: %v", err)
		}
		target := "NULL"
		if e.TargetID != nil {
			target = fmt.Sprintf("%q", *e.TargetID)
		}
		return fmt.Sprintf("target=%s event=%s", target, ev)
	})
}

// sameSpawns compares pending spawn lists like sameOutbox.
func sameSpawns(want, got []model.SpawnEntry) error {
	if err := ascending("pending spawns", got, func(e model.SpawnEntry) int64 { return e.Seq }); err != nil {
		return err
	}
	return sameList("pending spawns", want, got, func(e model.SpawnEntry) string {
		ctx, err := model.CanonicalJSON(e.Context)
		if err != nil {
			ctx = fmt.Sprintf("invalid context: %v", err)
		}
		return fmt.Sprintf("parent=%q child=%q root_path=%q context=%s", e.ParentID, e.ChildID, e.RootPath, ctx)
	})
}

// sameTrace compares read_trace results, indices included.
func sameTrace(want, got []model.TraceEntry) error {
	return sameList("trace", want, got, func(e model.TraceEntry) string {
		entry, err := model.CanonicalJSON(e.Entry)
		if err != nil {
			entry = fmt.Sprintf("invalid entry: %v", err)
		}
		return fmt.Sprintf("index=%d entry=%s", e.Index, entry)
	})
}

// sameDueTimers compares due timers: soonest first, and the same set. Timers
// due at the same instant may come in any order (the seeds order by fire_at
// only).
func sameDueTimers(want, got []model.DueTimer) error {
	for i := 1; i < len(got); i++ {
		if got[i].FireAt < got[i-1].FireAt {
			return fmt.Errorf("due timers not soonest first: fire_at %v follows %v", got[i].FireAt, got[i-1].FireAt)
		}
	}
	sorted := slices.Clone(got)
	model.SortDueTimers(sorted)
	return sameList("due timers", want, sorted, func(d model.DueTimer) string {
		return fmt.Sprintf("(%q, %q, %v)", d.ExecutionID, d.Path, d.FireAt)
	})
}

// samePage compares one page of list_executions; cursors are opaque and only
// compared for presence.
func samePage(want, got model.Page) error {
	if err := sameList("page", want.Items, got.Items, describeSummary); err != nil {
		return err
	}
	if (want.Next == "") != (got.Next == "") {
		return fmt.Errorf("page: the reference says more rows remain: %v, the store: %v", want.Next != "", got.Next != "")
	}
	return nil
}

func describeSummary(s model.ExecutionSummary) string {
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%q", *p)
	}
	return fmt.Sprintf("{id=%q def=%q v=%d status=%q outcome=%s path=%q parent=%s}",
		s.ID, s.DefinitionID, s.Version, s.Status, str(s.Outcome), s.ActivePath, str(s.ParentID))
}

func sameList[E any](what string, want, got []E, text func(E) string) error {
	var errs []error
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(want):
			errs = append(errs, fmt.Errorf("%s: unexpected entry %d: %s", what, i, text(got[i])))
		case i >= len(got):
			errs = append(errs, fmt.Errorf("%s: missing entry %d: %s", what, i, text(want[i])))
		case text(want[i]) != text(got[i]):
			errs = append(errs, fmt.Errorf("%s entry %d: want %s, got %s", what, i, text(want[i]), text(got[i])))
		}
	}
	return errors.Join(errs...)
}

func ascending[E any](what string, list []E, seq func(E) int64) error {
	for i := 1; i < len(list); i++ {
		if seq(list[i]) <= seq(list[i-1]) {
			return fmt.Errorf("%s not in ascending seq order: seq %d follows seq %d", what, seq(list[i]), seq(list[i-1]))
		}
	}
	return nil
}
