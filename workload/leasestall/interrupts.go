package leasestall

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/storecheck/storecheck/linearizability/leases"
	"github.com/storecheck/storecheck/model/runstore"
)

// interrupt is the holder that does not see an interrupt: a worker claims
// a fresh run (above every other priority, background claims held off) and
// checkpoints it, after a checkpoint numbered one too far that must be
// refused; an operator interrupts the run, first at the version it read
// before the checkpoint (a conflict), then at the current one; and the
// holder, alive and well within the lease it was granted, renews, asserts
// its token and finishes the run as failed (not queued: a run back in the
// queue would reach background workers, whose recorded claims porcupine,
// which never sees the interrupt, could not place). The interrupt made the
// run wait and ended the lease, so all three must be rejected. Then the
// operator decides the interrupt and the run goes on as decideAndExpire
// says. The claim is recorded; the rest goes to the store directly,
// unrecorded: the lease register porcupine checks has no interrupt in it,
// and the run, waiting, then timed out, is in no later operation of the
// history.
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
	if !g.skipCheckpoint(ctx, k, id, fence, cl.Run.Version) {
		return
	}
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
	g.decideAndExpire(ctx, k, in)
}

// skipCheckpoint is the holder's checkpoint numbered 2 on a run with none:
// a conflict, or the run's checkpoints would have a gap. It reports
// whether the phase may go on (the run unchanged). A store that accepts it
// has the holder finish the run as failed, unrecorded, so that the run,
// its history now beyond what porcupine was told, takes no later part.
func (g *goroutineRun) skipCheckpoint(ctx context.Context, k int, id string, fence runstore.Fence, version int64) bool {
	cp := (&worker{}).checkpoint(holding{run: id, fence: fence, seq: 1}, g.clk.Now())
	run, err := g.store.CommitCheckpoint(ctx, cp, fence, version)
	switch {
	case err == nil:
		g.found = append(g.found, leases.Violation{Guarantee: GuaranteeCheckpoints,
			Detail: fmt.Sprintf("interrupt after round %d: %s's commit_checkpoint numbered %d on %s, which had no checkpoint, succeeded", k, fence.Worker, cp.Sequence, id)})
		_, _ = g.store.FinishClaim(ctx, runstore.Finish{RunID: id, Fence: fence, ExpectedVersion: run.Version, Target: runstore.Failed, Now: g.clk.Now()})
		return false
	case runstore.Kind(err) != "conflict":
		g.notes = append(g.notes, fmt.Sprintf("interrupt after round %d: a checkpoint numbered %d on %s: want a conflict, got %v", k, cp.Sequence, id, err))
		return false
	}
	return true
}

// decideAndExpire goes on with the interrupted run, background claims held
// off (it passes through queued): the operator decides the interrupt (the
// run is queued), interrupts the run again with an interrupt due a logical
// millisecond later (it waits), and decides the first interrupt a second
// time, which must be a conflict; then the clock passes the second
// interrupt's expiry and expire_interrupts must expire it and time the run
// out. A run left queued (by a broken store, or a step that failed) is
// cancelled before the gate opens, so that no background worker claims a
// run whose history porcupine does not have.
func (g *goroutineRun) decideAndExpire(ctx context.Context, k int, first runstore.Interrupt) {
	id := first.RunID
	note := func(format string, a ...any) {
		g.notes = append(g.notes, fmt.Sprintf("interrupt after round %d: ", k)+fmt.Sprintf(format, a...))
	}
	g.claimGate.Lock()
	defer g.claimGate.Unlock()
	defer g.park(ctx, id, note)
	run, err := g.store.GetRun(ctx, id)
	if err != nil || run.Status != runstore.Waiting {
		note("%s is not waiting on %s (%s, %v): no decision made", id, first.ID, run.Status, err)
		return
	}
	decide := func(kind runstore.DecisionKind, version int64) (runstore.Run, error) {
		d := runstore.Decision{Kind: kind, ActorID: "operator", Reason: "lease-stall", Payload: []byte(`{}`)}
		return g.store.DecideInterrupt(ctx, first.ID, d, version, g.clk.Now())
	}
	if run, err = decide(runstore.Approve, run.Version); err != nil {
		note("decide_interrupt %s: %v", first.ID, err)
		return
	}
	created := g.clk.Now()
	due := created.Add(time.Millisecond)
	second := runstore.Interrupt{ID: id + "/review", RunID: id, Kind: "review", Request: []byte(`{}`), CreatedAt: created, ExpiresAt: &due}
	if run, err = g.store.CreateInterrupt(ctx, second, run.Version); err != nil {
		note("create_interrupt %s: %v", second.ID, err)
		return
	}
	again, err := decide(runstore.Reject, run.Version)
	switch {
	case err == nil:
		g.found = append(g.found, leases.Violation{Guarantee: GuaranteeDecideOnce,
			Detail: fmt.Sprintf("decide_interrupt %s succeeded a second time: %s is %s (version %d) while %s is pending",
				first.ID, id, again.Status, again.Version, second.ID)})
		return
	case runstore.Kind(err) != "conflict":
		note("decide_interrupt %s a second time: want a conflict, got %v", first.ID, err)
		return
	}
	g.clk.AdvanceTo(due)
	now := g.clk.Now()
	expired, err := g.store.ExpireInterrupts(ctx, now)
	if err != nil {
		note("expire_interrupts: %v", err)
		return
	}
	if run, err = g.store.GetRun(ctx, id); err != nil {
		note("get_run %s after expire_interrupts: %v", id, err)
		return
	}
	if !slices.Contains(expired, second.ID) || run.Status != runstore.TimedOut {
		g.found = append(g.found, leases.Violation{Guarantee: GuaranteeExpiry,
			Detail: fmt.Sprintf("expire_interrupts at %s returned %q; %s, due at %s, was pending, and its run %s is now %s, not %s",
				runstore.FormatTime(now), expired, second.ID, runstore.FormatTime(due), id, run.Status, runstore.TimedOut)})
	}
}

// park cancels run id if it is queued, so that no background worker
// claims it.
func (g *goroutineRun) park(ctx context.Context, id string, note func(string, ...any)) {
	run, err := g.store.GetRun(ctx, id)
	if err != nil || run.Status != runstore.Queued {
		return
	}
	_, err = g.store.TransitionRun(ctx, runstore.Transition{RunID: id, ExpectedVersion: run.Version, Target: runstore.Cancelled, Now: g.clk.Now()})
	if err != nil {
		note("cancel %s, left queued: %v", id, err)
	}
}
