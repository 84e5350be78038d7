package leasestall

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// interrupt is the holder that does not see an interrupt: a worker claims
// a fresh run (above every other priority, background claims held off) and
// checkpoints it; an operator interrupts the run, first at the version it
// read before the checkpoint (a conflict), then at the current one; and the
// holder, alive and well
// within the lease it was granted, renews, asserts its token and finishes
// the run as failed (not queued: a run back in the queue would reach
// background workers, whose recorded claims porcupine, which never sees
// the interrupt, could not place).
// The interrupt made the run wait and ended the lease, so all three must
// be rejected. The claim is recorded; the interrupt and the holder's calls
// go to the store directly, unrecorded: the lease register porcupine checks
// has no interrupt in it, and the run, waiting (or failed), is in no later
// operation of the history.
func (g *goroutineRun) interrupt(ctx context.Context, k int) {
	id := fmt.Sprintf("interrupted-%02d", k)
	holder := fmt.Sprintf("holder-%02d", k)
	note := func(format string, a ...any) {
		g.notes = append(g.notes, fmt.Sprintf("interrupt after round %d: ", k)+fmt.Sprintf(format, a...))
	}
	g.claimGate.Lock()
	_, err := g.store.CreateRun(ctx, runstore.NewRun{ID: id, TenantID: "lease-stall", SessionID: id, PlanID: "plan",
		RevisionID: "rev", Priority: roundPriority + 1, State: []byte(`{"seq":0}`), Now: g.clk.Now()})
	var cl *runstore.Claim
	if err == nil {
		cl, err = g.coord.Claim(ctx, holder, g.cfg.Lease, g.clk.Now())
	}
	if err == nil && cl != nil && cl.Run.ID != id {
		// Not the run of highest priority (the rounds' victims report
		// that): hand it back, recorded, as takeOver does.
		_, _ = g.coord.Finish(ctx, runstore.Finish{RunID: cl.Run.ID, Fence: runstore.Fence{Worker: holder, Token: cl.Lease.Token},
			ExpectedVersion: cl.Run.Version, Target: runstore.Queued, Now: g.clk.Now()})
	}
	g.claimGate.Unlock()
	switch {
	case err != nil:
		note("create and claim %s: %v", id, err)
		return
	case cl == nil || cl.Run.ID != id:
		note("the claim did not return %s, the queued run of highest priority", id)
		return
	}
	fence := runstore.Fence{Worker: holder, Token: cl.Lease.Token}
	// The operator read the run as the claim left it; the holder commits
	// a checkpoint first, so the operator's interrupt, at the version it
	// read, must be a conflict; it reads the run again and retries.
	committed, err := g.store.CommitCheckpoint(ctx, (&worker{}).checkpoint(holding{run: id, fence: fence}, g.clk.Now()), fence, cl.Run.Version)
	if err != nil {
		note("%s's checkpoint on %s: %v", holder, id, err)
		return
	}
	in := runstore.Interrupt{ID: id + "/approval", RunID: id, Kind: "approval", Request: []byte(`{}`), CreatedAt: g.clk.Now()}
	run, err := g.store.CreateInterrupt(ctx, in, cl.Run.Version)
	switch {
	case err == nil:
		g.found = append(g.found, leases.Violation{Guarantee: GuaranteeVersion,
			Detail: fmt.Sprintf("create_interrupt on %s expecting version %d succeeded after %s's checkpoint had made it version %d (now version %d)",
				id, cl.Run.Version, holder, committed.Version, run.Version)})
	case runstore.Kind(err) != "conflict":
		note("create_interrupt on %s at a stale version: want a conflict, got %v", id, err)
		return
	default:
		if run, err = g.store.CreateInterrupt(ctx, in, committed.Version); err != nil {
			note("create_interrupt on %s: %v", id, err)
			return
		}
	}
	now := g.clk.Now()
	if !now.Before(cl.Lease.ExpiresAt) {
		note("the clock passed %s's lease before it could act", holder)
		return
	}
	g.interrupts++
	seen := func(op string, err error) {
		if err == nil {
			g.found = append(g.found, leases.Violation{Guarantee: GuaranteeInterrupt,
				Detail: fmt.Sprintf("after %s was interrupted (now %s), %s's %s with token %d succeeded, its lease live until %s",
					id, run.Status, holder, op, fence.Token, runstore.FormatTime(cl.Lease.ExpiresAt))})
		}
	}
	_, err = g.store.RenewLease(ctx, id, fence, g.cfg.Lease, now)
	seen("renew_lease", err)
	seen("assert_fencing_token", g.store.AssertFencingToken(ctx, id, fence, now))
	if cur, err := g.store.GetRun(ctx, id); err == nil {
		_, err = g.store.FinishClaim(ctx, runstore.Finish{RunID: id, Fence: fence, ExpectedVersion: cur.Version, Target: runstore.Failed, Now: now})
		seen("finish_claim → failed", err)
	}
}
