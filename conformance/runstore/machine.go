package runstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// The pools the machine draws from: small, so that operations collide.
var (
	runIDs        = []string{"r1", "r2", "r3", "r4", "r5", "r6"}
	missingRun    = "r-missing"
	tenants       = []string{"t1", "t2"}
	sessions      = []string{"s1", "s2", "s3"}
	keys          = []string{"", "k1", "K1"} // two keys differing only in case: keys are compared exactly
	workers       = []string{"w1", "w2"}
	checkpointIDs = []string{"c1", "c2", "c3", "c4"}
	interruptIDs  = []string{"i1", "i2", "i3"}
	leases        = []time.Duration{30 * time.Second, 10 * time.Second}
	ticks         = []time.Duration{time.Nanosecond, time.Second, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 31 * time.Second}
)

// start begins one test case: an empty reference model beside the store,
// the clock at t0, and the actions that drive both.
func start(ctx context.Context, _ *rapid.T, store runmodel.Store, _ noConfig, stats *Stats) map[string]func(*rapid.T) {
	m := &machine{ctx: ctx, store: store, ref: runmodel.NewReference(), stats: stats, now: t0}
	return m.actions()
}

// machine is one test case: the store under test and the reference side by
// side, and the clock.
type machine struct {
	ctx   context.Context
	store runmodel.Store
	ref   *runmodel.Reference
	stats *Stats
	now   time.Time
	// parked says the park episode ran in this test case: it runs once.
	parked bool
}

// actions is one weighted operation per step, and the invariant after each.
func (m *machine) actions() map[string]func(*rapid.T) {
	var names []string
	ops := map[string]func(*rapid.T){}
	for _, w := range m.weighted() {
		for range w.weight {
			names = append(names, w.name)
		}
		ops[w.name] = w.run
	}
	return map[string]func(*rapid.T){
		"op": func(t *rapid.T) { ops[rapid.SampledFrom(names).Draw(t, "op")](t) },
		"":   m.invariant,
	}
}

// weightedOp is an operation and how often it is drawn.
type weightedOp struct {
	name   string
	weight int
	run    func(*rapid.T)
}

// weighted lists the operations: writes that build up state (creates,
// claims, checkpoints) come up more often than reads, so that a sequence of
// thirty steps reaches leases, takeovers and interrupts.
func (m *machine) weighted() []weightedOp {
	return []weightedOp{
		{"tick", 3, m.tick},
		{"create_run", 3, m.createRun},
		{"claim_next", 4, m.claimNext},
		{"renew_lease", 2, m.renewLease},
		{"assert_fencing_token", 1, m.assertFencingToken},
		{"commit_checkpoint", 3, m.commitCheckpoint},
		{"finish_claim", 2, m.finishClaim},
		{"requeue_expired_leases", 2, m.requeue},
		{"transition_run", 2, m.transitionRun},
		{"append_run_event", 1, m.appendRunEvent},
		{"append_checkpoint", 1, m.appendCheckpoint},
		{"create_interrupt", 2, m.createInterrupt},
		{"decide_interrupt", 2, m.decideInterrupt},
		{"expire_interrupts", 2, m.expireInterrupts},
		{"read", 2, m.read},
		{"park", 1, m.park},
	}
}

// read runs one of the read-only operations.
func (m *machine) read(t *rapid.T) {
	reads := []func(*rapid.T){m.getRun, m.listRuns, m.listRunEvents, m.checkpoints, m.interrupts}
	reads[rapid.IntRange(0, len(reads)-1).Draw(t, "read")](t)
}

// compare logs the step with the reference's outcome and fails the test
// case when the store's outcome differs.
func (m *machine) compare(t *rapid.T, step, wantDesc string, wantErr error, gotDesc string, gotErr error) {
	t.Helper()
	m.stats.Ops.Add(1)
	m.stats.Step(t, step+" -> "+outcome(wantDesc, wantErr))
	if runmodel.Kind(wantErr) == "other" {
		t.Fatalf("reference failed: %v", wantErr)
	}
	if err := sameOutcome(wantDesc, wantErr, gotDesc, gotErr); err != nil {
		op, _, _ := strings.Cut(step, " ")
		t.Fatalf("%s: store differs from the reference model: %v", op, err)
	}
}

// tick moves the clock by one of ticks or, one draw in three when a live
// lease or a pending interrupt has a deadline ahead, to the soonest of those
// deadlines exactly. The contract's boundaries are met at that instant only:
// a lease whose expiry is not after now is expired (the fence refuses it, a
// sweep at now takes it), an interrupt is overdue at its expires_at; ticks
// of whole seconds reach them only by chance.
func (m *machine) tick(t *rapid.T) {
	if next, ok := m.nextDeadline(); ok && rapid.IntRange(0, 2).Draw(t, "to_deadline") == 2 {
		d := next.Sub(m.now)
		m.now = next
		m.stats.Step(t, fmt.Sprintf("tick +%v (to the next deadline) -> now %s", d, stamp(m.now)))
		return
	}
	d := rapid.SampledFrom(ticks).Draw(t, "tick")
	m.now = m.now.Add(d)
	m.stats.Step(t, fmt.Sprintf("tick +%v -> now %s", d, stamp(m.now)))
}

// nextDeadline is the soonest expiry after now of an active lease or a
// pending interrupt in the reference.
func (m *machine) nextDeadline() (time.Time, bool) {
	d, err := m.ref.Dump(m.ctx)
	if err != nil {
		return time.Time{}, false
	}
	now, next := runmodel.FormatTime(m.now), ""
	later := func(at string) {
		if at > now && (next == "" || at < next) {
			next = at
		}
	}
	for _, l := range d.Leases {
		if l.Active {
			later(l.ExpiresAt)
		}
	}
	for _, in := range d.Interrupts {
		if in.DecidedAt == nil && in.ExpiresAt != nil {
			later(*in.ExpiresAt)
		}
	}
	if next == "" {
		return time.Time{}, false
	}
	at, err := runmodel.ParseTime(next)
	return at, err == nil
}

// drawRun is mostly a run the reference holds, sometimes any id of the
// pool or a missing one.
func (m *machine) drawRun(t *rapid.T) string {
	d, _ := m.ref.Dump(m.ctx)
	if len(d.Runs) > 0 && rapid.IntRange(0, 3).Draw(t, "existing_run") > 0 {
		return d.Runs[rapid.IntRange(0, len(d.Runs)-1).Draw(t, "run_index")].ID
	}
	return rapid.SampledFrom(append([]string{missingRun}, runIDs...)).Draw(t, "run")
}

// drawLeased is mostly a run whose lease is live in the reference (active
// and not expired at the machine's clock), so that fenced operations often
// meet a live lease; expired and stale ones come from drawFence and tick.
func (m *machine) drawLeased(t *rapid.T) string {
	d, _ := m.ref.Dump(m.ctx)
	var active []string
	now := runmodel.FormatTime(m.now)
	for _, l := range d.Leases {
		if l.Active && l.ExpiresAt > now {
			active = append(active, l.RunID)
		}
	}
	if len(active) > 0 && rapid.IntRange(0, 3).Draw(t, "leased_run") > 0 {
		return active[rapid.IntRange(0, len(active)-1).Draw(t, "leased_index")]
	}
	return m.drawRun(t)
}

// drawVersion is mostly the run's current version in the reference,
// sometimes a stale or a future one.
func (m *machine) drawVersion(t *rapid.T, runID string) (int64, string) {
	cur := int64(1)
	if run, err := m.ref.GetRun(m.ctx, runID); err == nil {
		cur = run.Version
	}
	// rapid favours small draws: the common case is 0.
	switch rapid.IntRange(0, 7).Draw(t, "version_choice") {
	case 6:
		return cur - 1, "stale"
	case 7:
		return cur + 1, "ahead"
	}
	return cur, "current"
}

// drawFence is mostly the run's current holder and token in the reference
// (whether or not the lease is still live), sometimes a stale token, a
// future one, or another worker.
func (m *machine) drawFence(t *rapid.T, runID string) (runmodel.Fence, string) {
	f := runmodel.Fence{Worker: workers[0], Token: 1}
	if l, ok := m.refLease(runID); ok {
		f = runmodel.Fence{Worker: l.Holder, Token: l.Token}
	}
	switch rapid.IntRange(0, 9).Draw(t, "fence_choice") {
	case 7:
		return runmodel.Fence{Worker: f.Worker, Token: f.Token - 1}, "stale token"
	case 8:
		return runmodel.Fence{Worker: f.Worker, Token: f.Token + 1}, "future token"
	case 9:
		other := workers[0]
		if f.Worker == other {
			other = workers[1]
		}
		return runmodel.Fence{Worker: other, Token: f.Token}, "other worker"
	}
	return f, "holder"
}

func (m *machine) refLease(runID string) (runmodel.LeaseRow, bool) {
	d, err := m.ref.Dump(m.ctx)
	if err != nil {
		return runmodel.LeaseRow{}, false
	}
	for _, l := range d.Leases {
		if l.RunID == runID {
			return l, true
		}
	}
	return runmodel.LeaseRow{}, false
}

// drawSequence is mostly the run's next checkpoint sequence, sometimes one
// that skips or repeats.
func (m *machine) drawSequence(t *rapid.T, runID string) int64 {
	cps, _ := m.ref.ListCheckpoints(m.ctx, runID)
	next := int64(len(cps)) + 1
	switch rapid.IntRange(0, 5).Draw(t, "sequence_choice") {
	case 4:
		return next + 1
	case 5:
		return next - 1
	}
	return next
}

func drawObject(t *rapid.T, label string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"v":%d}`, rapid.IntRange(0, 2).Draw(t, label)))
}

// drawNewRun is mostly an id the reference does not hold yet and a session
// without an active run, sometimes any of the pool (a taken id, a busy
// session).
func (m *machine) drawNewRun(t *rapid.T) (id, session string) {
	d, _ := m.ref.Dump(m.ctx)
	taken, busy := map[string]bool{}, map[string]bool{}
	for _, r := range d.Runs {
		taken[r.ID] = true
		busy[r.SessionID] = busy[r.SessionID] || r.Status.Active()
	}
	id = rapid.SampledFrom(runIDs).Draw(t, "run")
	if rapid.IntRange(0, 4).Draw(t, "fresh_run") < 4 {
		for _, r := range runIDs {
			if !taken[r] {
				id = r
				break
			}
		}
	}
	session = rapid.SampledFrom(sessions).Draw(t, "session")
	if rapid.IntRange(0, 4).Draw(t, "free_session") < 4 {
		for _, s := range sessions {
			if !busy[s] {
				session = s
				break
			}
		}
	}
	return id, session
}

func (m *machine) createRun(t *rapid.T) {
	id, session := m.drawNewRun(t)
	m.create(t, m.drawNewRunRequest(t, id, rapid.SampledFrom(tenants).Draw(t, "tenant"), session, rapid.SampledFrom(keys).Draw(t, "key")))
}

// drawNewRunRequest is a create_run request for id of tenant in session
// under key, the rest drawn.
func (m *machine) drawNewRunRequest(t *rapid.T, id, tenant, session, key string) runmodel.NewRun {
	return runmodel.NewRun{
		ID: id, TenantID: tenant,
		SessionID: session, PlanID: "plan", RevisionID: "rev",
		IdempotencyKey: key, Priority: int64(rapid.IntRange(0, 2).Draw(t, "priority")),
		State: drawObject(t, "state"), NextNodes: rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b"}), 0, 2).Draw(t, "next"),
		Context: drawObject(t, "context"), Now: m.now,
	}
}

// create runs create_run req on both sides and compares.
func (m *machine) create(t *rapid.T, req runmodel.NewRun) {
	want, wantErr := m.ref.CreateRun(m.ctx, req)
	got, gotErr := m.store.CreateRun(m.ctx, req)
	m.compare(t, fmt.Sprintf("create_run %q tenant=%s session=%s key=%q priority=%d state=%s", req.ID, req.TenantID, req.SessionID,
		req.IdempotencyKey, req.Priority, req.State), describeRun(want), wantErr, describeRun(got), gotErr)
}

func (m *machine) getRun(t *rapid.T) {
	id := m.drawRun(t)
	want, wantErr := m.ref.GetRun(m.ctx, id)
	got, gotErr := m.store.GetRun(m.ctx, id)
	m.compare(t, fmt.Sprintf("get_run %q", id), describeRun(want), wantErr, describeRun(got), gotErr)
}

func (m *machine) listRuns(t *rapid.T) {
	f := runmodel.ListFilter{TenantID: rapid.SampledFrom(tenants).Draw(t, "tenant"), Limit: rapid.IntRange(0, 3).Draw(t, "limit")}
	if rapid.Bool().Draw(t, "by_session") {
		f.SessionID = rapid.SampledFrom(sessions).Draw(t, "session")
	}
	f.Statuses = rapid.SliceOfNDistinct(rapid.SampledFrom(runmodel.Statuses()), 0, 2, rapid.ID[runmodel.Status]).Draw(t, "statuses")
	if rapid.IntRange(0, 2).Draw(t, "paged") == 0 {
		f.After = m.drawCursor(t, f.TenantID)
	}
	m.pageRuns(t, f)
	if f.Limit == 0 {
		// An unpaged listing, then every tenant's runs a page of one at a
		// time: each run is a cursor once.
		for _, tenant := range tenants {
			m.pageRuns(t, runmodel.ListFilter{TenantID: tenant, Limit: 1})
		}
	}
}

// pageRuns lists f's page and, while a page comes back full, the page
// after its last run, as a caller paging through a listing does: every
// page is compared, so the cursor is exercised from every run a page ends
// at. Bounded by the pool: at most one page per run of it, plus the last.
func (m *machine) pageRuns(t *rapid.T, f runmodel.ListFilter) {
	for page := 0; page <= len(runIDs); page++ {
		want, wantErr := m.ref.ListRuns(m.ctx, f)
		got, gotErr := m.store.ListRuns(m.ctx, f)
		m.compare(t, fmt.Sprintf("list_runs %+v", f), describeAll(want, describeRun), wantErr, describeAll(got, describeRun), gotErr)
		if wantErr != nil || f.Limit == 0 || len(want) < f.Limit {
			return
		}
		f.After = want[len(want)-1].ID
	}
}

// drawCursor is mostly a run of the listed tenant, so that the page after
// it is a real page (another tenant's run is ErrNotFound), sometimes any
// run.
func (m *machine) drawCursor(t *rapid.T, tenant string) string {
	runs, _ := m.ref.ListRuns(m.ctx, runmodel.ListFilter{TenantID: tenant})
	if len(runs) > 0 && rapid.IntRange(0, 3).Draw(t, "tenant_cursor") > 0 {
		return runs[rapid.IntRange(0, len(runs)-1).Draw(t, "cursor_index")].ID
	}
	return m.drawRun(t)
}

// drawMoved is the run a transition_run moves and the targets to draw from.
// One draw in two when a run waits on a pending interrupt with a deadline,
// it is such a run, moved out of waiting by a caller (queued, cancelled,
// failed) before its interrupt expires: the expiry must then leave its
// status alone. Otherwise drawRun, to any status.
func (m *machine) drawMoved(t *rapid.T) (string, []runmodel.Status) {
	d, _ := m.ref.Dump(m.ctx)
	waiting := map[string]bool{}
	for _, r := range d.Runs {
		waiting[r.ID] = r.Status == runmodel.Waiting
	}
	var parked []string
	for _, in := range d.Interrupts {
		if in.DecidedAt == nil && in.ExpiresAt != nil && waiting[in.RunID] {
			parked = append(parked, in.RunID)
		}
	}
	if len(parked) > 0 && rapid.IntRange(0, 1).Draw(t, "parked_run") == 1 {
		return parked[rapid.IntRange(0, len(parked)-1).Draw(t, "parked_index")], []runmodel.Status{runmodel.Queued, runmodel.Cancelled, runmodel.Failed}
	}
	return m.drawRun(t), runmodel.Statuses()
}

func (m *machine) transitionRun(t *rapid.T) {
	id, targets := m.drawMoved(t)
	v, kind := m.drawVersion(t, id)
	req := runmodel.Transition{RunID: id, ExpectedVersion: v, Target: rapid.SampledFrom(targets).Draw(t, "target"), Now: m.now}
	if rapid.Bool().Draw(t, "new_state") {
		req.State = drawObject(t, "state")
	}
	m.transition(t, req, kind)
}

// transition runs transition_run req on both sides and compares; kind says
// how its expected version was drawn.
func (m *machine) transition(t *rapid.T, req runmodel.Transition, kind string) {
	want, wantErr := m.ref.TransitionRun(m.ctx, req)
	got, gotErr := m.store.TransitionRun(m.ctx, req)
	m.compare(t, fmt.Sprintf("transition_run %q v%d (%s) → %s", req.RunID, req.ExpectedVersion, kind, req.Target), describeRun(want), wantErr, describeRun(got), gotErr)
}

func (m *machine) appendRunEvent(t *rapid.T) {
	id := m.drawRun(t)
	data := drawObject(t, "data")
	want, wantErr := m.ref.AppendRunEvent(m.ctx, id, "custom", data, m.now)
	got, gotErr := m.store.AppendRunEvent(m.ctx, id, "custom", data, m.now)
	m.compare(t, fmt.Sprintf("append_run_event %q %s", id, data), describeEvent(want), wantErr, describeEvent(got), gotErr)
}

func (m *machine) listRunEvents(t *rapid.T) {
	id := m.drawRun(t)
	after, limit := int64(rapid.IntRange(0, 3).Draw(t, "after")), rapid.IntRange(0, 2).Draw(t, "limit")
	want, wantErr := m.ref.ListRunEvents(m.ctx, id, after, limit)
	got, gotErr := m.store.ListRunEvents(m.ctx, id, after, limit)
	m.compare(t, fmt.Sprintf("list_run_events %q after=%d limit=%d", id, after, limit),
		describeAll(want, describeEvent), wantErr, describeAll(got, describeEvent), gotErr)
}

func (m *machine) drawCheckpoint(t *rapid.T, runID string) runmodel.Checkpoint {
	return runmodel.Checkpoint{ID: rapid.SampledFrom(checkpointIDs).Draw(t, "checkpoint"), RunID: runID,
		Sequence: m.drawSequence(t, runID), PlanHash: "h", State: drawObject(t, "state"), NextNodes: []string{"n"},
		EffectWatermark: int64(rapid.IntRange(0, 3).Draw(t, "watermark")), CreatedAt: m.now}
}

func (m *machine) appendCheckpoint(t *rapid.T) {
	cp := m.drawCheckpoint(t, m.drawRun(t))
	wantErr := m.ref.AppendCheckpoint(m.ctx, cp)
	gotErr := m.store.AppendCheckpoint(m.ctx, cp)
	m.compare(t, fmt.Sprintf("append_checkpoint %q run=%q seq=%d", cp.ID, cp.RunID, cp.Sequence), "ok", wantErr, "ok", gotErr)
}

func (m *machine) checkpoints(t *rapid.T) {
	id := m.drawRun(t)
	want, wantErr := m.ref.ListCheckpoints(m.ctx, id)
	got, gotErr := m.store.ListCheckpoints(m.ctx, id)
	m.compare(t, fmt.Sprintf("list_checkpoints %q", id), describeAll(want, describeCheckpoint), wantErr, describeAll(got, describeCheckpoint), gotErr)
	wantL, wantErr := m.ref.LatestCheckpoint(m.ctx, id)
	gotL, gotErr := m.store.LatestCheckpoint(m.ctx, id)
	m.compare(t, fmt.Sprintf("latest_checkpoint %q", id), describeOptional(wantL), wantErr, describeOptional(gotL), gotErr)
}

func describeOptional(c *runmodel.Checkpoint) string {
	if c == nil {
		return "none"
	}
	return describeCheckpoint(*c)
}

func (m *machine) claimNext(t *rapid.T) {
	w, l := rapid.SampledFrom(workers).Draw(t, "worker"), rapid.SampledFrom(leases).Draw(t, "lease")
	want, wantErr := m.ref.ClaimNext(m.ctx, w, l, m.now)
	got, gotErr := m.store.ClaimNext(m.ctx, w, l, m.now)
	m.compare(t, fmt.Sprintf("claim_next %s lease=%v", w, l), describeClaim(want), wantErr, describeClaim(got), gotErr)
}

func (m *machine) renewLease(t *rapid.T) {
	id := m.drawLeased(t)
	f, kind := m.drawFence(t, id)
	l := rapid.SampledFrom(leases).Draw(t, "lease")
	want, wantErr := m.ref.RenewLease(m.ctx, id, f, l, m.now)
	got, gotErr := m.store.RenewLease(m.ctx, id, f, l, m.now)
	m.compare(t, fmt.Sprintf("renew_lease %q %s/%d (%s) lease=%v", id, f.Worker, f.Token, kind, l), describeLease(want), wantErr, describeLease(got), gotErr)
}

func (m *machine) assertFencingToken(t *rapid.T) {
	id := m.drawLeased(t)
	f, kind := m.drawFence(t, id)
	wantErr := m.ref.AssertFencingToken(m.ctx, id, f, m.now)
	gotErr := m.store.AssertFencingToken(m.ctx, id, f, m.now)
	m.compare(t, fmt.Sprintf("assert_fencing_token %q %s/%d (%s)", id, f.Worker, f.Token, kind), "ok", wantErr, "ok", gotErr)
}

func (m *machine) commitCheckpoint(t *rapid.T) {
	id := m.drawLeased(t)
	f, fkind := m.drawFence(t, id)
	v, vkind := m.drawVersion(t, id)
	cp := m.drawCheckpoint(t, id)
	want, wantErr := m.ref.CommitCheckpoint(m.ctx, cp, f, v)
	got, gotErr := m.store.CommitCheckpoint(m.ctx, cp, f, v)
	m.compare(t, fmt.Sprintf("commit_checkpoint %q %s/%d (%s) v%d (%s) %q seq=%d", id, f.Worker, f.Token, fkind, v, vkind, cp.ID, cp.Sequence),
		describeRun(want), wantErr, describeRun(got), gotErr)
}

func (m *machine) finishClaim(t *rapid.T) {
	id := m.drawLeased(t)
	f, fkind := m.drawFence(t, id)
	v, vkind := m.drawVersion(t, id)
	req := runmodel.Finish{RunID: id, Fence: f, ExpectedVersion: v, Target: rapid.SampledFrom(runmodel.Statuses()).Draw(t, "target"), Now: m.now}
	m.finish(t, req, fkind, vkind)
}

// finish runs finish_claim req on both sides and compares; fkind and vkind
// say how its fence and expected version were drawn.
func (m *machine) finish(t *rapid.T, req runmodel.Finish, fkind, vkind string) {
	want, wantErr := m.ref.FinishClaim(m.ctx, req)
	got, gotErr := m.store.FinishClaim(m.ctx, req)
	m.compare(t, fmt.Sprintf("finish_claim %q %s/%d (%s) v%d (%s) → %s", req.RunID, req.Fence.Worker, req.Fence.Token, fkind, req.ExpectedVersion, vkind, req.Target),
		describeRun(want), wantErr, describeRun(got), gotErr)
}

func (m *machine) requeue(t *rapid.T) {
	want, wantErr := m.ref.RequeueExpiredLeases(m.ctx, m.now)
	got, gotErr := m.store.RequeueExpiredLeases(m.ctx, m.now)
	m.compare(t, "requeue_expired_leases", list(want), wantErr, list(got), gotErr)
}

func (m *machine) createInterrupt(t *rapid.T) {
	id := m.drawRun(t)
	v, kind := m.drawVersion(t, id)
	in := m.drawInterrupt(t, rapid.SampledFrom(interruptIDs).Draw(t, "interrupt"), id)
	m.interrupt(t, in, v, kind)
}

// interrupt runs create_interrupt in at expected version v on both sides
// and compares; kind says how v was drawn.
func (m *machine) interrupt(t *rapid.T, in runmodel.Interrupt, v int64, kind string) {
	want, wantErr := m.ref.CreateInterrupt(m.ctx, in, v)
	got, gotErr := m.store.CreateInterrupt(m.ctx, in, v)
	m.compare(t, fmt.Sprintf("create_interrupt %q run=%q v%d (%s) expires=%s", in.ID, in.RunID, v, kind, stampPtr(in.ExpiresAt)),
		describeRun(want), wantErr, describeRun(got), gotErr)
}

// drawInterrupt is an approval interrupt id on runID, created now, due in
// 5 or 20 s or never.
func (m *machine) drawInterrupt(t *rapid.T, id, runID string) runmodel.Interrupt {
	in := runmodel.Interrupt{ID: id, RunID: runID, Kind: "approval", Request: drawObject(t, "request"), CreatedAt: m.now}
	if d := rapid.SampledFrom([]time.Duration{0, 5 * time.Second, 20 * time.Second}).Draw(t, "expires_in"); d > 0 {
		exp := m.now.Add(d)
		in.ExpiresAt = &exp
	}
	return in
}

func (m *machine) decideInterrupt(t *rapid.T) {
	id := rapid.SampledFrom(append([]string{"i-missing"}, interruptIDs...)).Draw(t, "interrupt")
	if decided := m.decided(); len(decided) > 0 && rapid.IntRange(0, 1).Draw(t, "decided_again") == 1 {
		id = decided[rapid.IntRange(0, len(decided)-1).Draw(t, "decided_index")]
	} else if pending, _ := m.ref.ListInterrupts(m.ctx, rapid.SampledFrom(tenants).Draw(t, "tenant"), true); len(pending) > 0 && rapid.IntRange(0, 3).Draw(t, "pending") > 0 {
		id = pending[rapid.IntRange(0, len(pending)-1).Draw(t, "pending_index")].ID
	}
	runID := missingRun
	if in, err := m.ref.GetInterrupt(m.ctx, id); err == nil {
		runID = in.RunID
	}
	v, kind := m.drawVersion(t, runID)
	d := runmodel.Decision{Kind: rapid.SampledFrom([]runmodel.DecisionKind{runmodel.Approve, runmodel.Reject}).Draw(t, "decision"),
		ActorID: "actor", Reason: "because", Payload: drawObject(t, "payload")}
	want, wantErr := m.ref.DecideInterrupt(m.ctx, id, d, v, m.now)
	got, gotErr := m.store.DecideInterrupt(m.ctx, id, d, v, m.now)
	m.compare(t, fmt.Sprintf("decide_interrupt %q %s v%d (%s)", id, d.Kind, v, kind), describeRun(want), wantErr, describeRun(got), gotErr)
}

// decided lists the decided interrupts, those whose run could be queued
// now (running or waiting again) first: deciding one again must be a
// conflict, and a store that lets it through queues the run if it can.
func (m *machine) decided() []string {
	d, _ := m.ref.Dump(m.ctx)
	status := map[string]runmodel.Status{}
	for _, r := range d.Runs {
		status[r.ID] = r.Status
	}
	var requeueable, others []string
	for _, in := range d.Interrupts {
		switch {
		case in.DecidedAt == nil:
		case runmodel.CanTransition(status[in.RunID], runmodel.Queued):
			requeueable = append(requeueable, in.ID)
		default:
			others = append(others, in.ID)
		}
	}
	return append(requeueable, others...)
}

func (m *machine) expireInterrupts(t *rapid.T) {
	want, wantErr := m.ref.ExpireInterrupts(m.ctx, m.now)
	got, gotErr := m.store.ExpireInterrupts(m.ctx, m.now)
	m.compare(t, "expire_interrupts", list(want), wantErr, list(got), gotErr)
}

func (m *machine) interrupts(t *rapid.T) {
	tenant, pending := rapid.SampledFrom(tenants).Draw(t, "tenant"), rapid.Bool().Draw(t, "pending_only")
	want, wantErr := m.ref.ListInterrupts(m.ctx, tenant, pending)
	got, gotErr := m.store.ListInterrupts(m.ctx, tenant, pending)
	m.compare(t, fmt.Sprintf("list_interrupts %s pending_only=%v", tenant, pending),
		describeAll(want, describeInterrupt), wantErr, describeAll(got, describeInterrupt), gotErr)
	id := rapid.SampledFrom(append([]string{"i-missing"}, interruptIDs...)).Draw(t, "interrupt")
	wantI, wantErr := m.ref.GetInterrupt(m.ctx, id)
	gotI, gotErr := m.store.GetInterrupt(m.ctx, id)
	m.compare(t, fmt.Sprintf("get_interrupt %q", id), describeInterrupt(wantI), wantErr, describeInterrupt(gotI), gotErr)
}

// invariant compares all five tables after every step (when the store can
// dump them) and checks the contract's invariants on the store's tables.
func (m *machine) invariant(t *rapid.T) {
	got, err := storeTables(m.ctx, m.store)
	if err != nil {
		t.Fatalf("tables: %v", err)
	}
	if got == nil {
		return // a store without Dump is compared through its results only
	}
	want, err := m.ref.Dump(m.ctx)
	if err != nil {
		t.Fatalf("reference tables: %v", err)
	}
	if diff := runmodel.Diff(want, got, 0); len(diff) > 0 {
		t.Fatalf("tables: store differs from the reference model, %d differences:\n  %s", len(diff), strings.Join(diff, "\n  "))
	}
	if problems := runmodel.Invariants(got); len(problems) > 0 {
		t.Fatalf("tables: %s", strings.Join(problems, "; "))
	}
}
