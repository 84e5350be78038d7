package runstore

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/storecheck/storecheck/conformance/internal/engine"
	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// example is one named example test.
type example struct {
	name string
	run  func(ctx context.Context, t *testing.T, s runmodel.Store)
}

// checkingInvariants is ex as the engine runs it: the example, then the
// contract's invariants on the tables it left.
func (ex example) checkingInvariants() engine.Example[runmodel.Store, noConfig] {
	return engine.Example[runmodel.Store, noConfig]{Name: ex.name, Run: func(ctx context.Context, t *testing.T, s runmodel.Store) {
		ex.run(ctx, t, s)
		checkInvariants(ctx, t, s)
	}}
}

// examples lists every example, in the order a reader meets the contract.
func examples() []example {
	return []example{
		{"CreateIsQueuedAtVersion1", exCreate},
		{"IdempotentCreateReturnsStoredRun", exIdempotentCreate},
		{"IdempotencyKeyWithDifferentRequestConflicts", exIdempotencyConflict},
		{"IdempotencyKeyIsPerTenant", exIdempotencyPerTenant},
		{"OneActiveRunPerSession", exOneActivePerSession},
		{"TakenRunIDConflicts", exTakenRunID},
		{"GetMissingIsNotFound", exGetMissing},
		{"ListRunsFiltersAndPages", exListRuns},
		{"TransitionChecksVersionAndTable", exTransition},
		{"EventsNumberedWithoutGaps", exEvents},
		{"CheckpointSequenceMustBeNext", exCheckpoints},
		{"BadArgumentsAreRejected", exBadArguments},
		{"ClaimTakesHighestPriorityThenOldest", exClaimOrder},
		{"ClaimGrantsNextFencingToken", exClaimToken},
		{"RenewNeedsHolderTokenAndLiveLease", exRenew},
		{"ExpiredLeaseCannotBeRenewed", exRenewExpired},
		{"CommitCheckpointNeedsTheFence", exCommitCheckpoint},
		{"FinishNeedsTheFenceAndEndsTheLease", exFinish},
		{"StaleTokenRejectedAfterTakeover", exStaleTokenAfterTakeover},
		{"RequeueReturnsExpiredRunningRuns", exRequeue},
		{"InterruptParksRunAndEndsLease", exInterrupt},
		{"InterruptIsDecidedOnce", exDecideOnce},
		{"ExpireInterruptsTimesWaitingRunOut", exExpireInterrupts},
		{"TwoOverdueInterruptsOnOneRun", exTwoOverdueInterrupts},
	}
}

// t0 is the examples' clock origin.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

func newRun(id, session string) runmodel.NewRun {
	return runmodel.NewRun{ID: id, TenantID: "tenant", SessionID: session, PlanID: "plan", RevisionID: "rev",
		State: json.RawMessage(`{"step":0}`), NextNodes: []string{"start"}, Context: json.RawMessage(`{"user":"u"}`), Now: t0}
}

func mustCreate(ctx context.Context, t *testing.T, s runmodel.Store, req runmodel.NewRun) runmodel.Run {
	t.Helper()
	run, err := s.CreateRun(ctx, req)
	if err != nil {
		t.Fatalf("create_run %q: %v", req.ID, err)
	}
	return run
}

func mustGet(ctx context.Context, t *testing.T, s runmodel.Store, id string) runmodel.Run {
	t.Helper()
	run, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatalf("get_run %q: %v", id, err)
	}
	return run
}

// wantKind fails t unless err is the contract error kind ("" for success).
func wantKind(t *testing.T, what string, err error, kind string) {
	t.Helper()
	if got := runmodel.Kind(err); got != kind {
		if kind == "" {
			kind = "success"
		}
		t.Fatalf("%s: want %s, got %v", what, kind, err)
	}
}

func wantEvents(ctx context.Context, t *testing.T, s runmodel.Store, runID string, types ...string) []runmodel.RunEvent {
	t.Helper()
	evs, err := s.ListRunEvents(ctx, runID, 0, 0)
	if err != nil {
		t.Fatalf("list_run_events %q: %v", runID, err)
	}
	var got []string
	for i, e := range evs {
		if e.Sequence != int64(i)+1 {
			t.Errorf("event %d has sequence %d (want 1, 2, 3… without gaps)", i, e.Sequence)
		}
		got = append(got, e.Type)
	}
	if describeAll(got, func(s string) string { return s }) != describeAll(types, func(s string) string { return s }) {
		t.Fatalf("events of %q: want %v, got %v", runID, types, got)
	}
	return evs
}

func exCreate(ctx context.Context, t *testing.T, s runmodel.Store) {
	run := mustCreate(ctx, t, s, newRun("r1", "s1"))
	if run.Status != runmodel.Queued || run.Version != 1 || !run.CreatedAt.Equal(t0) || !run.UpdatedAt.Equal(t0) {
		t.Fatalf("created run: %s", describeRun(run))
	}
	if got := describeRun(mustGet(ctx, t, s, "r1")); got != describeRun(run) {
		t.Fatalf("get_run after create:\n want %s\n got  %s", describeRun(run), got)
	}
	evs := wantEvents(ctx, t, s, "r1", runmodel.EventCreated)
	if canon(evs[0].Data) != `{"status":"queued"}` || !evs[0].CreatedAt.Equal(t0) {
		t.Fatalf("run.created event: %s", describeEvent(evs[0]))
	}
}

func exIdempotentCreate(ctx context.Context, t *testing.T, s runmodel.Store) {
	req := newRun("r1", "s1")
	req.IdempotencyKey = "k"
	first := mustCreate(ctx, t, s, req)
	// A retry under a fresh run id, a later time and another context is the
	// same request: the fingerprint leaves them out.
	retry := req
	retry.ID, retry.Now, retry.Context = "r2", at(5), json.RawMessage(`{"retry":true}`)
	again := mustCreate(ctx, t, s, retry)
	if describeRun(again) != describeRun(first) {
		t.Fatalf("idempotent create returned another run:\n want %s\n got  %s", describeRun(first), describeRun(again))
	}
	if _, err := s.GetRun(ctx, "r2"); runmodel.Kind(err) != "not_found" {
		t.Fatalf("the retry created run r2: %v", err)
	}
	wantEvents(ctx, t, s, "r1", runmodel.EventCreated)
}

func exIdempotencyConflict(ctx context.Context, t *testing.T, s runmodel.Store) {
	req := newRun("r1", "s1")
	req.IdempotencyKey = "k"
	mustCreate(ctx, t, s, req)
	for _, change := range []func(*runmodel.NewRun){
		func(r *runmodel.NewRun) { r.Priority = 5 },
		func(r *runmodel.NewRun) { r.State = json.RawMessage(`{"step":1}`) },
		func(r *runmodel.NewRun) { r.NextNodes = []string{"other"} },
		func(r *runmodel.NewRun) { r.PlanID = "plan-2" },
	} {
		other := req
		other.ID = "r2"
		change(&other)
		_, err := s.CreateRun(ctx, other)
		wantKind(t, "create_run reusing a key for another request", err, "conflict")
	}
}

func exIdempotencyPerTenant(ctx context.Context, t *testing.T, s runmodel.Store) {
	a := newRun("r1", "s1")
	a.IdempotencyKey = "k"
	mustCreate(ctx, t, s, a)
	b := newRun("r2", "s2")
	b.TenantID, b.IdempotencyKey = "other-tenant", "k"
	if run := mustCreate(ctx, t, s, b); run.ID != "r2" {
		t.Fatalf("another tenant's key returned run %q", run.ID)
	}
}

func exOneActivePerSession(ctx context.Context, t *testing.T, s runmodel.Store) {
	first := mustCreate(ctx, t, s, newRun("r1", "s1"))
	_, err := s.CreateRun(ctx, newRun("r2", "s1"))
	wantKind(t, "create_run in a session with an active run", err, "conflict")
	if _, err := s.GetRun(ctx, "r2"); runmodel.Kind(err) != "not_found" {
		t.Fatalf("a conflicting create left run r2 behind: %v", err)
	}
	mustCreate(ctx, t, s, newRun("r3", "s2")) // another session is free
	_, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: first.Version, Target: runmodel.Cancelled, Now: at(1)})
	wantKind(t, "cancel r1", err, "")
	mustCreate(ctx, t, s, newRun("r2", "s1")) // r1 is no longer active
}

func exTakenRunID(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	_, err := s.CreateRun(ctx, newRun("r1", "s2"))
	wantKind(t, "create_run with a taken id", err, "conflict")
}

func exGetMissing(ctx context.Context, t *testing.T, s runmodel.Store) {
	_, err := s.GetRun(ctx, "nope")
	wantKind(t, "get_run of a missing run", err, "not_found")
	_, err = s.GetInterrupt(ctx, "nope")
	wantKind(t, "get_interrupt of a missing interrupt", err, "not_found")
	cp, err := s.LatestCheckpoint(ctx, "nope")
	if err != nil || cp != nil {
		t.Fatalf("latest_checkpoint of a missing run: %v, %v", cp, err)
	}
}

func exListRuns(ctx context.Context, t *testing.T, s runmodel.Store) {
	// Created out of id order, two at the same time, one in another tenant.
	for i, c := range []struct {
		id, session string
		sec         int
	}{{"r3", "s1", 0}, {"r1", "s2", 1}, {"r2", "s3", 1}, {"r0", "s4", 2}} {
		req := newRun(c.id, c.session)
		req.Now = at(c.sec)
		if i == 3 {
			req.TenantID = "other"
		}
		mustCreate(ctx, t, s, req)
	}
	ids := func(f runmodel.ListFilter) []string {
		t.Helper()
		list, err := s.ListRuns(ctx, f)
		if err != nil {
			t.Fatalf("list_runs %+v: %v", f, err)
		}
		var out []string
		for _, r := range list {
			out = append(out, r.ID)
		}
		return out
	}
	check := func(f runmodel.ListFilter, want ...string) {
		t.Helper()
		if got := ids(f); list(got) != list(want) {
			t.Fatalf("list_runs %+v: want %v, got %v", f, want, got)
		}
	}
	check(runmodel.ListFilter{TenantID: "tenant"}, "r3", "r1", "r2")
	check(runmodel.ListFilter{TenantID: "tenant", Limit: 2}, "r3", "r1")
	check(runmodel.ListFilter{TenantID: "tenant", After: "r1"}, "r2")
	check(runmodel.ListFilter{TenantID: "tenant", SessionID: "s3"}, "r2")
	check(runmodel.ListFilter{TenantID: "tenant", Statuses: []runmodel.Status{runmodel.Running}})
	check(runmodel.ListFilter{TenantID: "other"}, "r0")
	_, err := s.ListRuns(ctx, runmodel.ListFilter{TenantID: "tenant", After: "r0"})
	wantKind(t, "list_runs after another tenant's run", err, "not_found")
	_, err = s.ListRuns(ctx, runmodel.ListFilter{TenantID: "tenant", Limit: -1})
	wantKind(t, "list_runs with a negative limit", err, "invalid_argument")
}

func exTransition(ctx context.Context, t *testing.T, s runmodel.Store) {
	run := mustCreate(ctx, t, s, newRun("r1", "s1"))
	_, err := s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: run.Version + 1, Target: runmodel.Cancelled, Now: at(1)})
	wantKind(t, "transition_run from a future version", err, "conflict")
	_, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: run.Version, Target: runmodel.Completed, Now: at(1)})
	wantKind(t, "transition_run queued → completed", err, "invalid_transition")
	_, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "nope", ExpectedVersion: 1, Target: runmodel.Cancelled, Now: at(1)})
	wantKind(t, "transition_run of a missing run", err, "not_found")
	moved, err := s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: run.Version, Target: runmodel.Waiting,
		State: json.RawMessage(`{"step":9}`), Now: at(2)})
	wantKind(t, "transition_run queued → waiting", err, "")
	if moved.Status != runmodel.Waiting || moved.Version != 2 || canon(moved.State) != `{"step":9}` || list(moved.NextNodes) != `["start"]` || !moved.UpdatedAt.Equal(at(2)) {
		t.Fatalf("transitioned run: %s", describeRun(moved))
	}
	_, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: run.Version, Target: runmodel.Cancelled, Now: at(3)})
	wantKind(t, "transition_run from the stale version", err, "conflict")
	evs := wantEvents(ctx, t, s, "r1", runmodel.EventCreated, runmodel.EventStateChanged)
	if canon(evs[1].Data) != `{"from":"queued","to":"waiting"}` {
		t.Fatalf("run.state.changed: %s", describeEvent(evs[1]))
	}
	done, err := s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: 2, Target: runmodel.Cancelled, Now: at(4)})
	wantKind(t, "transition_run waiting → cancelled", err, "")
	_, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: done.Version, Target: runmodel.Queued, Now: at(5)})
	wantKind(t, "transition_run out of a terminal status", err, "invalid_transition")
}

func exEvents(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	for i := range 3 {
		ev, err := s.AppendRunEvent(ctx, "r1", "custom", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), at(i+1))
		wantKind(t, "append_run_event", err, "")
		if ev.Sequence != int64(i)+2 || !ev.CreatedAt.Equal(at(i+1)) {
			t.Fatalf("append_run_event %d: %s", i, describeEvent(ev))
		}
	}
	if run := mustGet(ctx, t, s, "r1"); run.Version != 1 {
		t.Fatalf("append_run_event changed the run's version to %d (the seed's append leaves the run row alone)", run.Version)
	}
	page, err := s.ListRunEvents(ctx, "r1", 1, 2)
	if err != nil || len(page) != 2 || page[0].Sequence != 2 || page[1].Sequence != 3 {
		t.Fatalf("list_run_events after 1 limit 2: %s, %v", describeAll(page, describeEvent), err)
	}
	_, err = s.AppendRunEvent(ctx, "nope", "custom", nil, at(9))
	wantKind(t, "append_run_event to a missing run", err, "not_found")
	_, err = s.ListRunEvents(ctx, "r1", -1, 0)
	wantKind(t, "list_run_events after -1", err, "invalid_argument")
}

func checkpoint(id, runID string, seq int64, sec int) runmodel.Checkpoint {
	return runmodel.Checkpoint{ID: id, RunID: runID, Sequence: seq, PlanHash: "h", State: json.RawMessage(`{"cp":"` + id + `"}`),
		NextNodes: []string{"n" + id}, PendingInterrupts: []string{}, EffectWatermark: seq * 10, CreatedAt: at(sec)}
}

func exCheckpoints(ctx context.Context, t *testing.T, s runmodel.Store) {
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	wantKind(t, "append_checkpoint 1", s.AppendCheckpoint(ctx, checkpoint("c1", "r1", 1, 1)), "")
	wantKind(t, "append_checkpoint 3 after 1", s.AppendCheckpoint(ctx, checkpoint("c3", "r1", 3, 2)), "conflict")
	wantKind(t, "append_checkpoint 1 again", s.AppendCheckpoint(ctx, checkpoint("c1b", "r1", 1, 2)), "conflict")
	wantKind(t, "append_checkpoint with a taken id", s.AppendCheckpoint(ctx, checkpoint("c1", "r1", 2, 2)), "conflict")
	wantKind(t, "append_checkpoint 2", s.AppendCheckpoint(ctx, checkpoint("c2", "r1", 2, 3)), "")
	wantKind(t, "append_checkpoint to a missing run", s.AppendCheckpoint(ctx, checkpoint("c9", "nope", 1, 3)), "not_found")
	latest, err := s.LatestCheckpoint(ctx, "r1")
	if err != nil || latest == nil || describeCheckpoint(*latest) != describeCheckpoint(checkpoint("c2", "r1", 2, 3)) {
		t.Fatalf("latest_checkpoint: %v, %v", latest, err)
	}
	all, err := s.ListCheckpoints(ctx, "r1")
	if err != nil || len(all) != 2 || all[0].ID != "c1" || all[1].ID != "c2" {
		t.Fatalf("list_checkpoints: %s, %v", describeAll(all, describeCheckpoint), err)
	}
	if run := mustGet(ctx, t, s, "r1"); run.Version != 1 || canon(run.State) != `{"step":0}` {
		t.Fatalf("append_checkpoint changed the run: %s", describeRun(run))
	}
	wantEvents(ctx, t, s, "r1", runmodel.EventCreated, runmodel.EventCheckpointCreated, runmodel.EventCheckpointCreated)
}

func exBadArguments(ctx context.Context, t *testing.T, s runmodel.Store) {
	bad := newRun("r1", "s1")
	bad.State = json.RawMessage(`[1]`)
	_, err := s.CreateRun(ctx, bad)
	wantKind(t, "create_run with an array state", err, "invalid_argument")
	bad = newRun("", "s1")
	_, err = s.CreateRun(ctx, bad)
	wantKind(t, "create_run without an id", err, "invalid_argument")
	_, err = s.ClaimNext(ctx, " ", time.Minute, t0)
	wantKind(t, "claim_next with a blank worker", err, "invalid_argument")
	_, err = s.ClaimNext(ctx, "w", 0, t0)
	wantKind(t, "claim_next with a zero lease", err, "invalid_argument")
	_, err = s.RenewLease(ctx, "r1", runmodel.Fence{Worker: "w", Token: 1}, -time.Second, t0)
	wantKind(t, "renew_lease with a negative lease", err, "invalid_argument")
	mustCreate(ctx, t, s, newRun("r1", "s1"))
	_, err = s.TransitionRun(ctx, runmodel.Transition{RunID: "r1", ExpectedVersion: 1, Target: "paused", Now: t0})
	wantKind(t, "transition_run to an unknown status", err, "invalid_argument")
}
