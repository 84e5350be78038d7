package runstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// The describe functions render a value with every field the contract
// compares, JSON canonical and times in runmodel.TimeLayout, so that two
// values are equal iff their descriptions are, whichever store made them.

func describeRun(r runmodel.Run) string {
	return fmt.Sprintf("run{id=%q tenant=%q session=%q plan=%q revision=%q key=%q status=%s priority=%d state=%s next=%s context=%s version=%d created=%s updated=%s}",
		r.ID, r.TenantID, r.SessionID, r.PlanID, r.RevisionID, r.IdempotencyKey, r.Status, r.Priority, canon(r.State),
		list(r.NextNodes), canon(r.Context), r.Version, stamp(r.CreatedAt), stamp(r.UpdatedAt))
}

func describeEvent(e runmodel.RunEvent) string {
	return fmt.Sprintf("event{run=%q seq=%d type=%q data=%s at=%s}", e.RunID, e.Sequence, e.Type, canon(e.Data), stamp(e.CreatedAt))
}

func describeCheckpoint(c runmodel.Checkpoint) string {
	return fmt.Sprintf("checkpoint{id=%q run=%q seq=%d plan_hash=%q state=%s next=%s pending=%s watermark=%d at=%s}",
		c.ID, c.RunID, c.Sequence, c.PlanHash, canon(c.State), list(c.NextNodes), list(c.PendingInterrupts), c.EffectWatermark, stamp(c.CreatedAt))
}

func describeLease(l runmodel.Lease) string {
	return fmt.Sprintf("lease{id=%q run=%q holder=%q token=%d active=%v expires=%s created=%s updated=%s}",
		l.ID, l.RunID, l.Holder, l.Token, l.Active, stamp(l.ExpiresAt), stamp(l.CreatedAt), stamp(l.UpdatedAt))
}

func describeInterrupt(in runmodel.Interrupt) string {
	d := "none"
	if in.Decision != nil {
		d = fmt.Sprintf("%s/%q/%q/%s", in.Decision.Kind, in.Decision.ActorID, in.Decision.Reason, canon(in.Decision.Payload))
	}
	return fmt.Sprintf("interrupt{id=%q run=%q kind=%q request=%s created=%s expires=%s decision=%s decided=%s}",
		in.ID, in.RunID, in.Kind, canon(in.Request), stamp(in.CreatedAt), stampPtr(in.ExpiresAt), d, stampPtr(in.DecidedAt))
}

func describeClaim(c *runmodel.Claim) string {
	if c == nil {
		return "none"
	}
	return describeRun(c.Run) + " " + describeLease(c.Lease)
}

func describeAll[V any](vs []V, one func(V) string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = one(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func canon(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "<none>"
	}
	s, err := model.CanonicalJSON(raw)
	if err != nil {
		return fmt.Sprintf("<invalid %q>", raw)
	}
	return s
}

func list(l []string) string {
	if l == nil {
		l = []string{}
	}
	return fmt.Sprintf("%q", l)
}

func stamp(t time.Time) string { return runmodel.FormatTime(t) }

func stampPtr(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return stamp(*t)
}

// outcome is one side's result: the description of its value, or its error
// kind.
func outcome(desc string, err error) string {
	if err != nil {
		return "error " + runmodel.Kind(err)
	}
	return desc
}

// sameOutcome compares the reference's result with the store's: the same
// error kind, or the same value.
func sameOutcome(wantDesc string, wantErr error, gotDesc string, gotErr error) error {
	want, got := outcome(wantDesc, wantErr), outcome(gotDesc, gotErr)
	if want == got {
		return nil
	}
	if gotErr != nil {
		return fmt.Errorf("want %s, got %s (%v)", want, got, gotErr)
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

// storeTables returns the store's tables, or nil when it cannot dump them.
func storeTables(ctx context.Context, s runmodel.Store) (*runmodel.Dump, error) {
	d, ok := s.(runmodel.Dumper)
	if !ok {
		return nil, nil
	}
	dump, err := d.Dump(ctx)
	if err != nil {
		return nil, fmt.Errorf("dump tables: %w", err)
	}
	dump.Sort()
	return dump, nil
}

// checkInvariants fails t when the store's tables break an invariant of
// the contract (runmodel.Invariants).
func checkInvariants(ctx context.Context, t *testing.T, s runmodel.Store) {
	t.Helper()
	d, err := storeTables(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if d == nil {
		return
	}
	for _, p := range runmodel.Invariants(d) {
		t.Errorf("tables: %s", p)
	}
}
