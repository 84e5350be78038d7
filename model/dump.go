package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Dump is the whole content of the six tables in canonical form: JSON columns
// canonicalised (CanonicalJSON) and rows sorted by primary key. Two stores that
// hold the same data give equal dumps, whatever language wrote them.
type Dump struct {
	Executions []ExecutionRow
	Outbox     []OutboxRow
	Processed  []ProcessedRow
	Timers     []TimerRow
	Spawns     []SpawnRow
	Trace      []TraceRow
}

// ExecutionRow is one row of executions.
type ExecutionRow struct {
	ID           string
	DefinitionID string
	Data         string // canonical JSON of the Execution
	Version      int64
}

// OutboxRow is one row of outbox.
type OutboxRow struct {
	Seq      int64
	TargetID *string
	Event    string // canonical JSON
}

// ProcessedRow is one row of processed_events.
type ProcessedRow struct {
	ExecutionID string
	EventID     string
}

// TimerRow is one row of timers.
type TimerRow struct {
	ExecutionID string
	Path        string
	FireAt      float64
}

// SpawnRow is one row of spawns.
type SpawnRow struct {
	Seq      int64
	ParentID string
	ChildID  string
	RootPath string
	Context  string // canonical JSON
}

// TraceRow is one row of trace.
type TraceRow struct {
	ExecutionID string
	Idx         int64
	Entry       string // canonical JSON
}

// Sort puts every table in primary-key order.
func (d *Dump) Sort() {
	slices.SortFunc(d.Executions, func(a, b ExecutionRow) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Outbox, func(a, b OutboxRow) int { return cmp.Compare(a.Seq, b.Seq) })
	slices.SortFunc(d.Processed, func(a, b ProcessedRow) int {
		return cmp.Or(strings.Compare(a.ExecutionID, b.ExecutionID), strings.Compare(a.EventID, b.EventID))
	})
	slices.SortFunc(d.Timers, func(a, b TimerRow) int {
		return cmp.Or(strings.Compare(a.ExecutionID, b.ExecutionID), strings.Compare(a.Path, b.Path))
	})
	slices.SortFunc(d.Spawns, func(a, b SpawnRow) int { return cmp.Compare(a.Seq, b.Seq) })
	slices.SortFunc(d.Trace, func(a, b TraceRow) int {
		return cmp.Or(strings.Compare(a.ExecutionID, b.ExecutionID), cmp.Compare(a.Idx, b.Idx))
	})
}

// DiffOptions tunes Diff.
type DiffOptions struct {
	// ExactSeqs compares outbox and spawn seq values. Without it only their
	// order is compared: the contract promises monotonic seqs, not the values
	// SQLite's AUTOINCREMENT happens to pick.
	ExactSeqs bool
	// Limit caps the differences reported; 0 means 20.
	Limit int
}

// Diff lists, in words, how got differs from want; nil means equal. Both dumps
// must be sorted.
func Diff(want, got *Dump, opt DiffOptions) []string {
	limit := opt.Limit
	if limit == 0 {
		limit = 20
	}
	var out []string
	add := func(format string, a ...any) {
		if len(out) < limit {
			out = append(out, fmt.Sprintf(format, a...))
		}
	}
	diffRows(add, "executions", want.Executions, got.Executions, func(a, b ExecutionRow) bool { return a == b }, func(r ExecutionRow) string {
		return fmt.Sprintf("id=%q definition_id=%q version=%d data=%s", r.ID, r.DefinitionID, r.Version, r.Data)
	})
	diffRows(add, "outbox", want.Outbox, got.Outbox, func(a, b OutboxRow) bool {
		return (!opt.ExactSeqs || a.Seq == b.Seq) && sameNullable(a.TargetID, b.TargetID) && a.Event == b.Event
	}, func(r OutboxRow) string {
		return seqText(r.Seq, opt.ExactSeqs) + fmt.Sprintf("target_id=%s event=%s", nullable(r.TargetID), r.Event)
	})
	diffRows(add, "processed_events", want.Processed, got.Processed, func(a, b ProcessedRow) bool { return a == b }, func(r ProcessedRow) string {
		return fmt.Sprintf("execution_id=%q event_id=%q", r.ExecutionID, r.EventID)
	})
	diffRows(add, "timers", want.Timers, got.Timers, func(a, b TimerRow) bool {
		// The bits, not ==: 0 and -0 print apart, and so differ.
		return a.ExecutionID == b.ExecutionID && a.Path == b.Path && math.Float64bits(a.FireAt) == math.Float64bits(b.FireAt)
	}, func(r TimerRow) string {
		return fmt.Sprintf("execution_id=%q path=%q fire_at=%v", r.ExecutionID, r.Path, r.FireAt)
	})
	diffRows(add, "spawns", want.Spawns, got.Spawns, func(a, b SpawnRow) bool {
		return (!opt.ExactSeqs || a.Seq == b.Seq) && a.ParentID == b.ParentID && a.ChildID == b.ChildID && a.RootPath == b.RootPath && a.Context == b.Context
	}, func(r SpawnRow) string {
		return seqText(r.Seq, opt.ExactSeqs) + fmt.Sprintf("parent_id=%q child_id=%q root_path=%q context=%s", r.ParentID, r.ChildID, r.RootPath, r.Context)
	})
	diffRows(add, "trace", want.Trace, got.Trace, func(a, b TraceRow) bool { return a == b }, func(r TraceRow) string {
		return fmt.Sprintf("execution_id=%q idx=%d entry=%s", r.ExecutionID, r.Idx, r.Entry)
	})
	if !opt.ExactSeqs {
		checkAscending(add, "outbox", got.Outbox, func(r OutboxRow) int64 { return r.Seq })
		checkAscending(add, "spawns", got.Spawns, func(r SpawnRow) int64 { return r.Seq })
	}
	return out
}

func seqText(seq int64, exact bool) string {
	if exact {
		return fmt.Sprintf("seq=%d ", seq)
	}
	return ""
}

// sameNullable says whether two nullable texts are both NULL or equal.
func sameNullable(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func nullable(p *string) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *p)
}

// diffRows compares two row lists position by position through their text
// form, which carries every compared column. same is a cheaper test whose
// yes implies equal texts (every column the text shows, compared exactly):
// a row it passes is not formatted. The conformance suite diffs all six
// tables after every step, nearly always equal, and formatting every row
// of both sides was 3% of a mutants catalogue's CPU (docs/PERFORMANCE.md).
func diffRows[R any](add func(string, ...any), table string, want, got []R, same func(a, b R) bool, text func(R) string) {
	n := max(len(want), len(got))
	for i := range n {
		switch {
		case i >= len(want):
			add("%s: unexpected row %s", table, text(got[i]))
		case i >= len(got):
			add("%s: missing row %s", table, text(want[i]))
		case same(want[i], got[i]):
		default:
			w, g := text(want[i]), text(got[i])
			if w != g {
				add("%s row %d: want %s, got %s", table, i, w, g)
			}
		}
	}
}

func checkAscending[R any](add func(string, ...any), table string, rows []R, seq func(R) int64) {
	for i := 1; i < len(rows); i++ {
		if seq(rows[i]) <= seq(rows[i-1]) {
			add("%s: seq %d follows seq %d (seqs must be strictly ascending)", table, seq(rows[i]), seq(rows[i-1]))
		}
	}
}
