package runstore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Dump is the whole content of the five tables in canonical form, rows
// sorted by primary key. Two stores that hold the same data give equal
// dumps.
type Dump struct {
	Runs        []RunRow
	Events      []EventRow
	Checkpoints []CheckpointRow
	Interrupts  []InterruptRow
	Leases      []LeaseRow
}

// Sort puts every table in primary-key order.
func (d *Dump) Sort() {
	slices.SortFunc(d.Runs, func(a, b RunRow) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Events, func(a, b EventRow) int {
		return cmp.Or(strings.Compare(a.RunID, b.RunID), cmp.Compare(a.Sequence, b.Sequence))
	})
	slices.SortFunc(d.Checkpoints, func(a, b CheckpointRow) int {
		return cmp.Or(strings.Compare(a.RunID, b.RunID), cmp.Compare(a.Sequence, b.Sequence))
	})
	slices.SortFunc(d.Interrupts, func(a, b InterruptRow) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(d.Leases, func(a, b LeaseRow) int { return strings.Compare(a.RunID, b.RunID) })
}

// Diff lists, in words, how got differs from want; nil means equal. Both
// dumps must be sorted. limit caps the differences; 0 means 20.
func Diff(want, got *Dump, limit int) []string {
	if limit == 0 {
		limit = 20
	}
	var out []string
	add := func(format string, a ...any) {
		if len(out) < limit {
			out = append(out, fmt.Sprintf(format, a...))
		}
	}
	diffRows(add, "runs", want.Runs, got.Runs, runText)
	diffRows(add, "run_events", want.Events, got.Events, func(r EventRow) string {
		return fmt.Sprintf("run_id=%q sequence=%d type=%q data=%s created_at=%s", r.RunID, r.Sequence, r.Type, r.Data, r.CreatedAt)
	})
	diffRows(add, "checkpoints", want.Checkpoints, got.Checkpoints, func(r CheckpointRow) string {
		return fmt.Sprintf("id=%q run_id=%q sequence=%d plan_hash=%q state=%s next_nodes=%s pending=%s watermark=%d created_at=%s",
			r.ID, r.RunID, r.Sequence, r.PlanHash, r.State, r.NextNodes, r.PendingInterrupts, r.EffectWatermark, r.CreatedAt)
	})
	diffRows(add, "interrupts", want.Interrupts, got.Interrupts, func(r InterruptRow) string {
		return fmt.Sprintf("id=%q run_id=%q kind=%q request=%s created_at=%s expires_at=%s decision=%s/%s/%s/%s decided_at=%s",
			r.ID, r.RunID, r.Kind, r.Request, r.CreatedAt, nullable(r.ExpiresAt), nullable(r.DecisionKind),
			nullable(r.DecisionActor), nullable(r.DecisionReason), nullable(r.DecisionPayload), nullable(r.DecidedAt))
	})
	diffRows(add, "run_leases", want.Leases, got.Leases, func(r LeaseRow) string {
		return fmt.Sprintf("id=%q run_id=%q holder=%q expires_at=%s fencing_token=%d active=%v created_at=%s updated_at=%s",
			r.ID, r.RunID, r.Holder, r.ExpiresAt, r.Token, r.Active, r.CreatedAt, r.UpdatedAt)
	})
	return out
}

func runText(r RunRow) string {
	return fmt.Sprintf("id=%q tenant=%q session=%q plan=%q revision=%q status=%s state=%s next_nodes=%s key=%s context=%s priority=%d fingerprint=%.12s created_at=%s updated_at=%s version=%d",
		r.ID, r.TenantID, r.SessionID, r.PlanID, r.RevisionID, r.Status, r.State, r.NextNodes, nullable(r.IdempotencyKey),
		r.Context, r.Priority, r.Fingerprint, r.CreatedAt, r.UpdatedAt, r.Version)
}

func nullable(p *string) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *p)
}

// diffRows compares two row lists position by position through their text
// form, which carries every compared column.
func diffRows[R any](add func(string, ...any), table string, want, got []R, text func(R) string) {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(want):
			add("%s: unexpected row %s", table, text(got[i]))
		case i >= len(got):
			add("%s: missing row %s", table, text(want[i]))
		default:
			if w, g := text(want[i]), text(got[i]); w != g {
				add("%s row %d: want %s, got %s", table, i, w, g)
			}
		}
	}
}
