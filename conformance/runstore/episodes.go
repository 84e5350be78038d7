package runstore

import (
	"pgregory.net/rapid"

	runmodel "github.com/storecheck/storecheck/model/runstore"
)

// park is an episode: a few steps in a row, each compared as a single draw
// is, aimed at one clause, run once per test case (the action's later draws
// are create_run). A running run (claimed first if none is) is moved to a
// status that keeps its session busy without a lease: to needs_review, by
// its holder's finish_claim or by a caller's transition_run, or to waiting,
// by an interrupt; then a run is created in its session, which must be a
// conflict: a session has at most one active run, whatever status makes it
// active. Then the parked run is cancelled, which frees its session, and up
// to two runs are created in its tenant at that same instant, in free
// sessions: runs created at one instant are what list_runs' (created_at, id)
// cursor must tell apart. Single draws reach needs_review rarely (a claim,
// then one target in eight) and seldom create in its session afterwards: a
// store whose one-active rule leaves out needs_review passed 8 of seeds 1–20
// without the episode (docs/DETECTION.md).
func (m *machine) park(t *rapid.T) {
	if m.parked {
		m.createRun(t)
		return
	}
	m.parked = true
	running := m.withStatus(runmodel.Running)
	if len(running) == 0 {
		m.claimNext(t)
		if running = m.withStatus(runmodel.Running); len(running) == 0 {
			return
		}
	}
	id := running[rapid.IntRange(0, len(running)-1).Draw(t, "park_index")]
	run, err := m.ref.GetRun(m.ctx, id)
	if err != nil {
		t.Fatalf("reference: running run %q: %v", id, err)
	}
	switch how := rapid.IntRange(0, 2).Draw(t, "park_how"); {
	case how == 0 && m.live(id):
		l, _ := m.refLease(id)
		m.finish(t, runmodel.Finish{RunID: id, Fence: runmodel.Fence{Worker: l.Holder, Token: l.Token},
			ExpectedVersion: run.Version, Target: runmodel.NeedsReview, Now: m.now}, "holder", "current")
	case how == 2 && m.freeInterrupt() != "":
		m.interrupt(t, m.drawInterrupt(t, m.freeInterrupt(), id), run.Version, "current")
	default:
		m.transition(t, runmodel.Transition{RunID: id, ExpectedVersion: run.Version, Target: runmodel.NeedsReview, Now: m.now}, "current")
	}
	if fresh := m.freeRun(); fresh != "" {
		m.create(t, m.drawNewRunRequest(t, fresh, rapid.SampledFrom(tenants).Draw(t, "tenant"), run.SessionID, ""))
	}
	if parked, err := m.ref.GetRun(m.ctx, id); err == nil && parked.Status != runmodel.Running {
		m.transition(t, runmodel.Transition{RunID: id, ExpectedVersion: parked.Version, Target: runmodel.Cancelled, Now: m.now}, "current")
	}
	for range 2 {
		if fresh, session := m.freeRun(), m.freeSession(); fresh != "" && session != "" {
			m.create(t, m.drawNewRunRequest(t, fresh, run.TenantID, session, ""))
		}
	}
}

// freeSession is the first session of the pool without an active run in
// the reference, or "".
func (m *machine) freeSession() string {
	d, _ := m.ref.Dump(m.ctx)
	busy := map[string]bool{}
	for _, r := range d.Runs {
		busy[r.SessionID] = busy[r.SessionID] || r.Status.Active()
	}
	return firstFree(sessions, busy)
}

// withStatus lists the reference's runs in status s.
func (m *machine) withStatus(s runmodel.Status) []string {
	d, _ := m.ref.Dump(m.ctx)
	var ids []string
	for _, r := range d.Runs {
		if r.Status == s {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// live says whether runID's lease is active and unexpired at the clock.
func (m *machine) live(runID string) bool {
	l, ok := m.refLease(runID)
	return ok && l.Active && l.ExpiresAt > runmodel.FormatTime(m.now)
}

// freeRun is the first id of the pool the reference holds no run under, or
// "" when every id is taken.
func (m *machine) freeRun() string {
	d, _ := m.ref.Dump(m.ctx)
	taken := map[string]bool{}
	for _, r := range d.Runs {
		taken[r.ID] = true
	}
	return firstFree(runIDs, taken)
}

// freeInterrupt is the first interrupt id of the pool not taken, or "".
func (m *machine) freeInterrupt() string {
	d, _ := m.ref.Dump(m.ctx)
	taken := map[string]bool{}
	for _, in := range d.Interrupts {
		taken[in.ID] = true
	}
	return firstFree(interruptIDs, taken)
}

// firstFree is the first of pool not in taken, or "".
func firstFree(pool []string, taken map[string]bool) string {
	for _, x := range pool {
		if !taken[x] {
			return x
		}
	}
	return ""
}
