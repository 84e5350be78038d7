package runstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	runmodel "github.com/storecheck/storecheck/model/runstore"
)

const lease = 30 * time.Second

func mustClaim(ctx context.Context, t *testing.T, s runmodel.Store, worker string, now time.Time) *runmodel.Claim {
	t.Helper()
	c, err := s.ClaimNext(ctx, worker, lease, now)
	if err != nil || c == nil {
		t.Fatalf("claim_next by %s: %v, %v", worker, c, err)
	}
	return c
}

func fenceOf(c *runmodel.Claim) runmodel.Fence {
	return runmodel.Fence{Worker: c.Lease.Holder, Token: c.Lease.Token}
}

func exClaimOrder(ctx context.Context, t *testing.T, s runmodel.Store) {
	for _, c := range []struct {
		id       string
		priority int64
		sec      int
	}{{"low", 0, 0}, {"high-late", 5, 2}, {"high-b", 5, 1}, {"high-a", 5, 1}} {
		req := newRun(c.id, "s-"+c.id)
		req.Priority, req.Now = c.priority, at(c.sec)
		mustCreate(ctx, t, s, req)
	}
	var order []string
	for range 4 {
		order = append(order, mustClaim(ctx, t, s, "w", at(10)).Run.ID)
	}
	if want := []string{"high-a", "high-b", "high-late", "low"}; list(order) != list(want) {
		t.Fatalf("claim order: want %v (priority, then oldest, then id), got %v", want, order)
	}
	if c, err := s.ClaimNext(ctx, "w", lease, at(11)); c != nil || err != nil {
		t.Fatalf("claim_next with nothing queued: want none, got %s, %v", describeClaim(c), err)
	}
}

func exClaimToken(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(1))
	if c.Run.Status != runmodel.Running || c.Run.Version != 2 || c.Lease.Token != 1 || !c.Lease.Active ||
		c.Lease.Holder != "w1" || !c.Lease.ExpiresAt.Equal(at(1).Add(lease)) || c.Lease.ID != runmodel.LeaseID("r1") {
		t.Fatalf("first claim: %s", describeClaim(c))
	}
	// Yield the run back to the queue; the next claim takes token 2.
	run, err := s.FinishClaim(ctx, runmodel.Finish{RunID: "r1", Fence: fenceOf(c), ExpectedVersion: 2, Target: runmodel.Queued, Now: at(2)})
	wantKind(t, "finish_claim → queued", err, "")
	c2 := mustClaim(ctx, t, s, "w2", at(3))
	if c2.Lease.Token != 2 || c2.Lease.Holder != "w2" || c2.Run.Version != run.Version+1 || !c2.Lease.CreatedAt.Equal(at(1)) {
		t.Fatalf("second claim: want token 2 for w2 at version %d, lease created at the first claim; got %s", run.Version+1, describeClaim(c2))
	}
	evs := wantEvents(ctx, t, s, "r1", runmodel.EventCreated, runmodel.EventClaimed, runmodel.EventExecutionDone, runmodel.EventClaimed)
	if canon(evs[3].Data) != `{"fencing_token":2,"worker_id":"w2"}` {
		t.Fatalf("run.claimed: %s", describeEvent(evs[3]))
	}
}

func exRenew(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(0))
	f := fenceOf(c)
	for _, bad := range []runmodel.Fence{{Worker: "w2", Token: f.Token}, {Worker: f.Worker, Token: f.Token + 1}, {Worker: f.Worker, Token: 0}} {
		_, err := s.RenewLease(ctx, "r1", bad, lease, at(1))
		wantKind(t, "renew_lease by a non-holder", err, "stale_lease")
		wantKind(t, "assert_fencing_token by a non-holder", s.AssertFencingToken(ctx, "r1", bad, at(1)), "stale_lease")
	}
	_, err := s.RenewLease(ctx, "nope", f, lease, at(1))
	wantKind(t, "renew_lease of a missing run", err, "stale_lease")
	l, err := s.RenewLease(ctx, "r1", f, lease, at(20))
	wantKind(t, "renew_lease by the holder", err, "")
	if !l.ExpiresAt.Equal(at(20).Add(lease)) || !l.UpdatedAt.Equal(at(20)) || l.Token != f.Token {
		t.Fatalf("renewed lease: %s", describeLease(l))
	}
	// The renewal moved the expiry: the lease is live past the first one.
	wantKind(t, "assert_fencing_token after renewal", s.AssertFencingToken(ctx, "r1", f, at(40)), "")
	if run := mustGet(ctx, t, s, "r1"); run.Version != c.Run.Version {
		t.Fatalf("renew_lease changed the run's version: %d → %d", c.Run.Version, run.Version)
	}
}

func exRenewExpired(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(0))
	f := fenceOf(c)
	// A lease is expired from expires_at on: at exactly the expiry the
	// holder has lost it, although no sweep has run yet.
	_, err := s.RenewLease(ctx, "r1", f, lease, c.Lease.ExpiresAt)
	wantKind(t, "renew_lease at the expiry", err, "stale_lease")
	_, err = s.RenewLease(ctx, "r1", f, lease, at(100))
	wantKind(t, "renew_lease long after the expiry", err, "stale_lease")
	wantKind(t, "assert_fencing_token at the expiry", s.AssertFencingToken(ctx, "r1", f, c.Lease.ExpiresAt), "stale_lease")
	_, err = s.RenewLease(ctx, "r1", f, lease, c.Lease.ExpiresAt.Add(-time.Nanosecond))
	wantKind(t, "renew_lease a nanosecond before the expiry", err, "")
}

func exCommitCheckpoint(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(0))
	f := fenceOf(c)
	_, err := s.CommitCheckpoint(ctx, checkpoint("c1", "r1", 1, 1), runmodel.Fence{Worker: "w2", Token: f.Token}, c.Run.Version)
	wantKind(t, "commit_checkpoint by another worker", err, "stale_lease")
	_, err = s.CommitCheckpoint(ctx, checkpoint("c1", "r1", 1, 1), f, c.Run.Version-1)
	wantKind(t, "commit_checkpoint from a stale version", err, "conflict")
	_, err = s.CommitCheckpoint(ctx, checkpoint("c1", "r1", 2, 1), f, c.Run.Version)
	wantKind(t, "commit_checkpoint skipping sequence 1", err, "conflict")
	run, err := s.CommitCheckpoint(ctx, checkpoint("c1", "r1", 1, 5), f, c.Run.Version)
	wantKind(t, "commit_checkpoint by the holder", err, "")
	if run.Version != c.Run.Version+1 || canon(run.State) != `{"cp":"c1"}` || list(run.NextNodes) != `["nc1"]` || !run.UpdatedAt.Equal(at(5)) || run.Status != runmodel.Running {
		t.Fatalf("run after commit_checkpoint: %s", describeRun(run))
	}
	_, err = s.CommitCheckpoint(ctx, checkpoint("c2", "r1", 2, 31), f, run.Version)
	wantKind(t, "commit_checkpoint after the lease expired", err, "stale_lease")
}

func exFinish(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(0))
	f := fenceOf(c)
	finish := func(fence runmodel.Fence, version int64, target runmodel.Status, sec int) (runmodel.Run, error) {
		return s.FinishClaim(ctx, runmodel.Finish{RunID: "r1", Fence: fence, ExpectedVersion: version, Target: target, Now: at(sec)})
	}
	_, err := finish(runmodel.Fence{Worker: f.Worker, Token: f.Token + 1}, c.Run.Version, runmodel.Completed, 1)
	wantKind(t, "finish_claim with another token", err, "stale_lease")
	_, err = finish(f, c.Run.Version, runmodel.Running, 1)
	wantKind(t, "finish_claim running → running", err, "invalid_transition")
	_, err = finish(f, c.Run.Version, runmodel.Completed, 30)
	wantKind(t, "finish_claim at the lease's expiry", err, "stale_lease")
	run, err := s.FinishClaim(ctx, runmodel.Finish{RunID: "r1", Fence: f, ExpectedVersion: c.Run.Version, Target: runmodel.Completed,
		EventType: "run.custom.done", EventData: json.RawMessage(`{"ok":true}`), Now: at(2)})
	wantKind(t, "finish_claim by the holder", err, "")
	if run.Status != runmodel.Completed || run.Version != c.Run.Version+1 {
		t.Fatalf("finished run: %s", describeRun(run))
	}
	wantKind(t, "assert_fencing_token after finish", s.AssertFencingToken(ctx, "r1", f, at(3)), "stale_lease")
	_, err = finish(f, run.Version, runmodel.Failed, 3)
	wantKind(t, "a second finish_claim", err, "stale_lease")
	evs := wantEvents(ctx, t, s, "r1", runmodel.EventCreated, runmodel.EventClaimed, "run.custom.done")
	if canon(evs[2].Data) != `{"ok":true}` {
		t.Fatalf("finish event: %s", describeEvent(evs[2]))
	}
}

// exStaleTokenAfterTakeover is the fencing scenario in miniature: a worker's
// lease expires, the run is requeued and claimed again — by the same worker
// id, as a restarted process would — and the old incarnation's token must
// be refused although the holder's name matches and the new lease is live.
func exStaleTokenAfterTakeover(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	old := mustClaim(ctx, t, s, "w1", at(0))
	ids, err := s.RequeueExpiredLeases(ctx, at(31))
	if err != nil || list(ids) != `["r1"]` {
		t.Fatalf("requeue_expired_leases: %v, %v", ids, err)
	}
	fresh := mustClaim(ctx, t, s, "w1", at(32))
	if fresh.Lease.Token != old.Lease.Token+1 {
		t.Fatalf("takeover claim: want token %d, got %d", old.Lease.Token+1, fresh.Lease.Token)
	}
	stale := fenceOf(old)
	_, err = s.CommitCheckpoint(ctx, checkpoint("c1", "r1", 1, 33), stale, fresh.Run.Version)
	wantKind(t, "commit_checkpoint with the stale token", err, "stale_lease")
	_, err = s.FinishClaim(ctx, runmodel.Finish{RunID: "r1", Fence: stale, ExpectedVersion: fresh.Run.Version, Target: runmodel.Completed, Now: at(33)})
	wantKind(t, "finish_claim with the stale token", err, "stale_lease")
	_, err = s.RenewLease(ctx, "r1", stale, lease, at(33))
	wantKind(t, "renew_lease with the stale token", err, "stale_lease")
	wantKind(t, "assert_fencing_token with the stale token", s.AssertFencingToken(ctx, "r1", stale, at(33)), "stale_lease")
	_, err = s.FinishClaim(ctx, runmodel.Finish{RunID: "r1", Fence: fenceOf(fresh), ExpectedVersion: fresh.Run.Version, Target: runmodel.Completed, Now: at(34)})
	wantKind(t, "finish_claim with the current token", err, "")
}

func exRequeue(ctx context.Context, t *testing.T, s runmodel.Store) {
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(ctx, t, s, newRun(id, "s-"+id))
	}
	ca := mustClaim(ctx, t, s, "w", at(0)) // expires at 30
	mustClaim(ctx, t, s, "w", at(5))       // expires at 35
	cc := mustClaim(ctx, t, s, "w", at(0)) // expires at 30, then ends
	if _, err := s.FinishClaim(ctx, runmodel.Finish{RunID: cc.Run.ID, Fence: fenceOf(cc), ExpectedVersion: cc.Run.Version, Target: runmodel.Completed, Now: at(1)}); err != nil {
		t.Fatal(err)
	}
	ids, err := s.RequeueExpiredLeases(ctx, at(29))
	if err != nil || len(ids) != 0 {
		t.Fatalf("requeue before any expiry: %v, %v", ids, err)
	}
	ids, err = s.RequeueExpiredLeases(ctx, at(30)) // expires_at <= now
	if err != nil || list(ids) != list([]string{ca.Run.ID}) {
		t.Fatalf("requeue at the first expiry: want [%s], got %v, %v", ca.Run.ID, ids, err)
	}
	run := mustGet(ctx, t, s, ca.Run.ID)
	if run.Status != runmodel.Queued || run.Version != ca.Run.Version+1 || !run.UpdatedAt.Equal(at(30)) {
		t.Fatalf("requeued run: %s", describeRun(run))
	}
	evs := wantEvents(ctx, t, s, ca.Run.ID, runmodel.EventCreated, runmodel.EventClaimed, runmodel.EventLeaseExpired)
	if canon(evs[2].Data) != `{"fencing_token":1}` {
		t.Fatalf("run.lease.expired: %s", describeEvent(evs[2]))
	}
	ids, err = s.RequeueExpiredLeases(ctx, at(100))
	if err != nil || len(ids) != 1 {
		t.Fatalf("second sweep: want one run, got %v, %v", ids, err)
	}
}

func exInterrupt(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(0))
	exp := at(60)
	in := runmodel.Interrupt{ID: "i1", RunID: "r1", Kind: "approval", Request: json.RawMessage(`{"q":"ok?"}`), CreatedAt: at(5), ExpiresAt: &exp}
	_, err := s.CreateInterrupt(ctx, in, c.Run.Version-1)
	wantKind(t, "create_interrupt from a stale version", err, "conflict")
	run, err := s.CreateInterrupt(ctx, in, c.Run.Version)
	wantKind(t, "create_interrupt", err, "")
	if run.Status != runmodel.Waiting || run.Version != c.Run.Version+1 || !run.UpdatedAt.Equal(at(5)) {
		t.Fatalf("interrupted run: %s", describeRun(run))
	}
	wantKind(t, "the holder's fence after the interrupt", s.AssertFencingToken(ctx, "r1", fenceOf(c), at(6)), "stale_lease")
	_, err = s.CreateInterrupt(ctx, runmodel.Interrupt{ID: "i2", RunID: "r1", Kind: "input", CreatedAt: at(6)}, run.Version)
	wantKind(t, "create_interrupt on a waiting run", err, "invalid_transition")
	got, err := s.GetInterrupt(ctx, "i1")
	if err != nil || got.Decision != nil || got.DecidedAt != nil || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) {
		t.Fatalf("get_interrupt: %s, %v", describeInterrupt(got), err)
	}
	pending, err := s.ListInterrupts(ctx, "tenant", true)
	if err != nil || len(pending) != 1 || pending[0].ID != "i1" {
		t.Fatalf("list_interrupts pending: %s, %v", describeAll(pending, describeInterrupt), err)
	}
	if others, err := s.ListInterrupts(ctx, "other", false); err != nil || len(others) != 0 {
		t.Fatalf("list_interrupts of another tenant: %s, %v", describeAll(others, describeInterrupt), err)
	}
}

func exDecideOnce(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	c := mustClaim(ctx, t, s, "w1", at(0))
	run, err := s.CreateInterrupt(ctx, runmodel.Interrupt{ID: "i1", RunID: "r1", Kind: "approval", CreatedAt: at(1)}, c.Run.Version)
	wantKind(t, "create_interrupt", err, "")
	d := runmodel.Decision{Kind: runmodel.Approve, ActorID: "alice", Reason: "fine", Payload: json.RawMessage(`{"edit":1}`)}
	_, err = s.DecideInterrupt(ctx, "nope", d, run.Version, at(2))
	wantKind(t, "decide_interrupt of a missing interrupt", err, "not_found")
	queued, err := s.DecideInterrupt(ctx, "i1", d, run.Version, at(2))
	wantKind(t, "decide_interrupt", err, "")
	if queued.Status != runmodel.Queued || queued.Version != run.Version+1 {
		t.Fatalf("decided run: %s", describeRun(queued))
	}
	_, err = s.DecideInterrupt(ctx, "i1", runmodel.Decision{Kind: runmodel.Reject, ActorID: "bob"}, queued.Version, at(3))
	wantKind(t, "a second decide_interrupt", err, "conflict")
	in, err := s.GetInterrupt(ctx, "i1")
	if err != nil || in.Decision == nil || in.Decision.ActorID != "alice" || in.DecidedAt == nil || !in.DecidedAt.Equal(at(2)) {
		t.Fatalf("decided interrupt: %s, %v", describeInterrupt(in), err)
	}
	if again := mustClaim(ctx, t, s, "w2", at(4)); again.Lease.Token != 2 {
		t.Fatalf("claim after the decision: want token 2, got %s", describeClaim(again))
	}
}

func exExpireInterrupts(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	mustCreate(ctx, t, s, newRun("r2", "s2"))
	c1 := mustClaim(ctx, t, s, "w", at(0))
	c2 := mustClaim(ctx, t, s, "w", at(0))
	e1, e2 := at(10), at(20)
	if _, err := s.CreateInterrupt(ctx, runmodel.Interrupt{ID: "i1", RunID: c1.Run.ID, Kind: "approval", CreatedAt: at(1), ExpiresAt: &e1}, c1.Run.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateInterrupt(ctx, runmodel.Interrupt{ID: "i2", RunID: c2.Run.ID, Kind: "approval", CreatedAt: at(1), ExpiresAt: &e2}, c2.Run.Version); err != nil {
		t.Fatal(err)
	}
	ids, err := s.ExpireInterrupts(ctx, at(9))
	if err != nil || len(ids) != 0 {
		t.Fatalf("expire before the deadline: %v, %v", ids, err)
	}
	ids, err = s.ExpireInterrupts(ctx, at(10))
	if err != nil || list(ids) != `["i1"]` {
		t.Fatalf("expire at the first deadline: want [i1], got %v, %v", ids, err)
	}
	run := mustGet(ctx, t, s, c1.Run.ID)
	if run.Status != runmodel.TimedOut || !run.UpdatedAt.Equal(at(10)) {
		t.Fatalf("run of the expired interrupt: %s", describeRun(run))
	}
	in, err := s.GetInterrupt(ctx, "i1")
	if err != nil || in.Decision == nil || in.Decision.Kind != runmodel.Reject || in.Decision.ActorID != runmodel.SystemActor || in.Decision.Reason != runmodel.ExpiredReason {
		t.Fatalf("expired interrupt: %s, %v", describeInterrupt(in), err)
	}
	if mustGet(ctx, t, s, c2.Run.ID).Status != runmodel.Waiting {
		t.Fatal("an interrupt not yet due timed its run out")
	}
	if ids, err := s.ExpireInterrupts(ctx, at(10)); err != nil || len(ids) != 0 {
		t.Fatalf("a decided interrupt expired again: %v, %v", ids, err)
	}
}

// exTwoOverdueInterrupts: a run moved on from waiting without a decision
// and interrupted again holds two pending interrupts; one sweep must expire
// both (the seed's sweep rolls back on its stale version read).
func exTwoOverdueInterrupts(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	e := at(50)
	c := mustClaim(ctx, t, s, "w", at(0))
	run, err := s.CreateInterrupt(ctx, runmodel.Interrupt{ID: "i1", RunID: "r1", Kind: "approval", CreatedAt: at(1), ExpiresAt: &e}, c.Run.Version)
	wantKind(t, "first interrupt", err, "")
	run, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: run.Version, Target: runmodel.Queued, Now: at(2)})
	wantKind(t, "waiting → queued without a decision", err, "")
	c = mustClaim(ctx, t, s, "w", at(3))
	_, err = s.CreateInterrupt(ctx, runmodel.Interrupt{ID: "i2", RunID: "r1", Kind: "input", CreatedAt: at(4), ExpiresAt: &e}, c.Run.Version)
	wantKind(t, "second interrupt", err, "")
	ids, err := s.ExpireInterrupts(ctx, at(60))
	if err != nil || list(ids) != `["i1" "i2"]` {
		t.Fatalf("expire both: want [i1 i2], got %v, %v", ids, err)
	}
	if run := mustGet(ctx, t, s, "r1"); run.Status != runmodel.TimedOut {
		t.Fatalf("run after both expired: %s", describeRun(run))
	}
}
