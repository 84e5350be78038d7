package conformance

import (
	"context"
	"fmt"
	"math"
	"slices"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/model"
)

// drawConfig draws a test case's trace cap.
func drawConfig(t *rapid.T) model.Config {
	return model.Config{TraceMax: rapid.SampledFrom([]int{0, 1, 3, model.DefaultTraceMax}).Draw(t, "trace_max")}
}

// start begins one test case: an empty reference model with the store's
// trace cap beside the store, and the actions that drive both.
func start(ctx context.Context, t *rapid.T, store model.Store, cfg model.Config, stats *Stats) map[string]func(*rapid.T) {
	m := &machine{ctx: ctx, store: store, ref: model.NewReference(cfg), stats: stats}
	t.Logf("store opened with trace_max=%d", cfg.TraceMax)
	return m.actions()
}

// machine is one test case: the store under test and the reference side by
// side.
type machine struct {
	ctx   context.Context
	store model.Store
	ref   *model.Reference
	stats *Stats

	// Every seq the store has shown, to prove seqs are never reused: an
	// INTEGER PRIMARY KEY without AUTOINCREMENT hands the seq of an acked
	// last entry to the next emit, and a late ack then deletes the wrong one.
	outboxSeqs, spawnSeqs seqLedger
	// Every timer a sweep has seen (due_timers, delete_timer), in the order
	// first seen, for stale sweeps.
	seenTimers []model.DueTimer
}

func (m *machine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"commit":         m.commit,
		"save":           m.save,
		"load":           m.load,
		"load_for_event": m.loadForEvent,
		"is_processed":   m.isProcessed,
		"list":           m.list,
		"ack_outbox":     m.ackOutbox,
		"ack_spawn":      m.ackSpawn,
		"due_timers":     m.dueTimers,
		"delete_timer":   m.deleteTimer,
		"append_trace":   m.appendTrace,
		"read_trace":     m.readTrace,
		"":               m.invariant,
	}
}

// fail stops the test case with the guarantee that broke.
func fail(t *rapid.T, op string, err error) {
	t.Helper()
	t.Fatalf("%s: store differs from the reference model: %v", op, err)
}

func (m *machine) op() { m.stats.Ops.Add(1) }

// step logs one operation of the sequence (rapid prints these lines for a
// failing sequence) and adds it to the sequence digest.
func (m *machine) step(t *rapid.T, format string, a ...any) {
	t.Helper()
	m.stats.Step(t, fmt.Sprintf(format, a...))
}

// currentVersion is the reference's version of id (0 when absent).
func (m *machine) currentVersion(t *rapid.T, id string) int64 {
	if exe := m.stored(t, id); exe != nil {
		return exe.Version
	}
	return 0
}

// drawVersion is mostly the current version, sometimes a stale or future one.
func (m *machine) drawVersion(t *rapid.T, id string) (int64, string) {
	cur := m.currentVersion(t, id)
	switch rapid.IntRange(0, 9).Draw(t, "version_choice") {
	case 0:
		if cur == 0 {
			return 0, "current"
		}
		return cur - 1, "stale"
	case 1:
		return cur + 1, "ahead"
	case 2:
		return 0, "zero"
	default:
		return cur, "current"
	}
}

func (m *machine) commit(t *rapid.T) { m.write(t, true) }
func (m *machine) save(t *rapid.T)   { m.write(t, false) }

func (m *machine) write(t *rapid.T, withBatch bool) {
	id := rapid.SampledFrom(executionIDs).Draw(t, "id")
	version, kind := m.drawVersion(t, id)
	var exe *model.Execution
	if stored := m.stored(t, id); stored != nil && rapid.IntRange(0, 7).Draw(t, "restale") == 0 {
		// A stale re-commit of exactly the stored state: it must lose and
		// write nothing (property 3). A guard that tells the winner by its
		// bytes (the rqlite seed's data = ours) cannot tell this loser from
		// it; a uniform draw of states almost never produces one.
		exe = stored.Clone()
		exe.Version--
		version, kind = exe.Version, "stale, the stored state"
	} else {
		exe = drawExecution(t, id, version)
	}
	var batch model.Batch
	if withBatch {
		batch = drawBatch(t, executionIDs)
	}
	refExe, gotExe := exe.Clone(), exe.Clone()
	var wantErr, gotErr error
	name := "save"
	if withBatch {
		name = "commit"
		wantErr = m.ref.Commit(m.ctx, refExe, batch)
		gotErr = m.store.Commit(m.ctx, gotExe, batch)
	} else {
		wantErr = m.ref.Save(m.ctx, refExe)
		gotErr = m.store.Save(m.ctx, gotExe)
	}
	m.op()
	outcome := fmt.Sprintf("ok at v%d", refExe.Version)
	if wantErr != nil {
		outcome = wantErr.Error()
	}
	m.step(t, "%s %q from v%d (%s version) [%s] -> %s", name, id, version, kind, describeBatch(batch), outcome)
	if err := sameWriteOutcome(wantErr, gotErr); err != nil {
		fail(t, name, err)
	}
	if gotExe.Version != refExe.Version {
		fail(t, name, fmt.Errorf("caller's version after the write: want %d, got %d (a failed write must leave it unchanged)", refExe.Version, gotExe.Version))
	}
}

// stored is the reference's execution id, nil when there is none.
func (m *machine) stored(t *rapid.T, id string) *model.Execution {
	exe, err := m.ref.Load(m.ctx, id)
	if err != nil {
		t.Fatalf("reference load: %v", err)
	}
	return exe
}

func (m *machine) drawReadID(t *rapid.T) string {
	return rapid.SampledFrom(append([]string{missingID}, executionIDs...)).Draw(t, "id")
}

// drawTraceWriteID aims half of the trace appends at the execution with
// the most trace steps so far, so that one ring outgrows a small cap and
// is trimmed within a short sequence.
func (m *machine) drawTraceWriteID(t *rapid.T) string {
	longest, most := "", 0
	for _, id := range executionIDs {
		if tr, err := m.ref.ReadTrace(m.ctx, id); err == nil && len(tr) > most {
			longest, most = id, len(tr)
		}
	}
	if longest != "" && rapid.Bool().Draw(t, "append_to_longest_trace") {
		return longest
	}
	return m.drawReadID(t)
}

// drawTraceReadID aims half of the trace reads at an execution whose ring
// has been trimmed (its first index is past 0), when there is one: that is
// the state in which a store's numbering of the ring can go wrong (indices
// must go on counting after a trim, never restart), and a uniform draw
// reaches it only when trace_max is small and one execution happens to
// get more steps than the cap before it is read.
func (m *machine) drawTraceReadID(t *rapid.T) string {
	var trimmed []string
	for _, id := range executionIDs {
		if tr, err := m.ref.ReadTrace(m.ctx, id); err == nil && len(tr) > 0 && tr[0].Index > 0 {
			trimmed = append(trimmed, id)
		}
	}
	if len(trimmed) > 0 && rapid.Bool().Draw(t, "read_trimmed_trace") {
		return rapid.SampledFrom(trimmed).Draw(t, "id")
	}
	return m.drawReadID(t)
}

func (m *machine) load(t *rapid.T) {
	id := m.drawReadID(t)
	want, wantErr := m.ref.Load(m.ctx, id)
	got, gotErr := m.store.Load(m.ctx, id)
	m.op()
	m.step(t, "load %q", id)
	if wantErr != nil {
		t.Fatalf("reference load: %v", wantErr)
	}
	if gotErr != nil {
		fail(t, "load", gotErr)
	}
	if err := sameExecution(want, got); err != nil {
		fail(t, "load", err)
	}
}

func (m *machine) loadForEvent(t *rapid.T) {
	id := m.drawReadID(t)
	ev := rapid.SampledFrom(eventIDs).Draw(t, "event_id")
	want, wantDone, wantErr := m.ref.LoadForEvent(m.ctx, id, ev)
	got, gotDone, gotErr := m.store.LoadForEvent(m.ctx, id, ev)
	m.op()
	m.step(t, "load_for_event %q %q", id, ev)
	if wantErr != nil {
		t.Fatalf("reference load_for_event: %v", wantErr)
	}
	if gotErr != nil {
		fail(t, "load_for_event", gotErr)
	}
	if err := sameExecution(want, got); err != nil {
		fail(t, "load_for_event", err)
	}
	if wantDone != gotDone {
		fail(t, "load_for_event", fmt.Errorf("already_processed: want %v, got %v", wantDone, gotDone))
	}
}

func (m *machine) isProcessed(t *rapid.T) {
	id := m.drawReadID(t)
	ev := rapid.SampledFrom(eventIDs).Draw(t, "event_id")
	want, _ := m.ref.IsProcessed(m.ctx, id, ev)
	got, err := m.store.IsProcessed(m.ctx, id, ev)
	m.op()
	m.step(t, "is_processed %q %q", id, ev)
	if err != nil {
		fail(t, "is_processed", err)
	}
	if want != got {
		fail(t, "is_processed", fmt.Errorf("want %v, got %v", want, got))
	}
}

// list pages through a random filter to the end on both sides, following each
// side's own opaque cursor.
func (m *machine) list(t *rapid.T) {
	var f model.ListFilter
	// Half the listings take every execution, a page or two at a time, so
	// that there are page boundaries to cross (a filtered listing often
	// matches fewer rows than its limit); the others draw their filters.
	if rapid.Bool().Draw(t, "list_everything") {
		f.Limit = rapid.IntRange(1, 2).Draw(t, "limit")
	} else {
		if rapid.Bool().Draw(t, "filter_definition?") {
			def := rapid.SampledFrom([]string{"def-a", "def-b", "2024-06-01T00:00:00Z", "def-none"}).Draw(t, "definition_id")
			f.DefinitionID = &def
		}
		f.Statuses = rapid.SliceOfNDistinct(rapid.SampledFrom(statuses), 0, 2, rapid.ID[string]).Draw(t, "statuses")
		f.RootsOnly = rapid.Bool().Draw(t, "roots_only")
		f.Limit = rapid.IntRange(1, 3).Draw(t, "limit")
	}
	m.step(t, "list definition=%v statuses=%v roots_only=%v limit=%d", deref(f.DefinitionID), f.Statuses, f.RootsOnly, f.Limit)
	wantF, gotF := f, f
	for page := 0; page <= len(executionIDs)+1; page++ {
		want, err := m.ref.ListExecutions(m.ctx, wantF)
		if err != nil {
			t.Fatalf("reference list: %v", err)
		}
		got, err := m.store.ListExecutions(m.ctx, gotF)
		m.op()
		if err != nil {
			fail(t, fmt.Sprintf("list page %d", page), err)
		}
		if err := samePage(want, got); err != nil {
			fail(t, fmt.Sprintf("list page %d", page), err)
		}
		if want.Next == "" {
			return
		}
		wantF.Cursor, gotF.Cursor = want.Next, got.Next
	}
	fail(t, "list", fmt.Errorf("pagination did not end after %d pages", len(executionIDs)+2))
}

func deref(p *string) string {
	if p == nil {
		return "any"
	}
	return *p
}

// ackOutbox reads both outboxes, compares them, then acks the same entry on
// both sides (by position, since seqs are the store's own), or a seq that is
// absent on both.
func (m *machine) ackOutbox(t *rapid.T) {
	want, err := m.ref.PendingOutbox(m.ctx)
	if err != nil {
		t.Fatalf("reference pending_outbox: %v", err)
	}
	got, err := m.store.PendingOutbox(m.ctx)
	m.op()
	if err != nil {
		fail(t, "pending_outbox", err)
	}
	m.step(t, "pending_outbox (%d entries)", len(want))
	if err := sameOutbox(want, got); err != nil {
		fail(t, "pending_outbox", err)
	}
	wantSeq, gotSeq, what := m.pickAck(t, len(want), func(i int) (int64, int64) { return want[i].Seq, got[i].Seq }, m.outboxSeqs.max)
	m.step(t, "ack_outbox %s", what)
	if err := m.ref.AckOutbox(m.ctx, wantSeq); err != nil {
		t.Fatalf("reference ack_outbox: %v", err)
	}
	if err := m.store.AckOutbox(m.ctx, gotSeq); err != nil {
		fail(t, "ack_outbox", err)
	}
	m.op()
}

func (m *machine) ackSpawn(t *rapid.T) {
	want, err := m.ref.PendingSpawns(m.ctx)
	if err != nil {
		t.Fatalf("reference pending_spawns: %v", err)
	}
	got, err := m.store.PendingSpawns(m.ctx)
	m.op()
	if err != nil {
		fail(t, "pending_spawns", err)
	}
	m.step(t, "pending_spawns (%d entries)", len(want))
	if err := sameSpawns(want, got); err != nil {
		fail(t, "pending_spawns", err)
	}
	wantSeq, gotSeq, what := m.pickAck(t, len(want), func(i int) (int64, int64) { return want[i].Seq, got[i].Seq }, m.spawnSeqs.max)
	m.step(t, "ack_spawn %s", what)
	if err := m.ref.AckSpawn(m.ctx, wantSeq); err != nil {
		t.Fatalf("reference ack_spawn: %v", err)
	}
	if err := m.store.AckSpawn(m.ctx, gotSeq); err != nil {
		fail(t, "ack_spawn", err)
	}
	m.op()
}

// pickAck chooses the pending entry at a random position, or — to check that
// acking an absent seq is a no-op — a seq past every one issued.
func (m *machine) pickAck(t *rapid.T, n int, seqs func(int) (int64, int64), maxSeen int64) (int64, int64, string) {
	if n == 0 || rapid.IntRange(0, 4).Draw(t, "ack_absent") == 0 {
		return math.MaxInt32, maxSeen + 1000, "an absent seq"
	}
	i := rapid.IntRange(0, n-1).Draw(t, "ack_position")
	w, g := seqs(i)
	return w, g, fmt.Sprintf("entry %d of %d", i, n)
}

func (m *machine) dueTimers(t *rapid.T) {
	// now is often exactly a fire_at, since due means fire_at <= now.
	now := rapid.SampledFrom(append([]float64{0, 2.4999, 1e12}, fireTimes...)).Draw(t, "now")
	want, err := m.ref.DueTimers(m.ctx, now)
	if err != nil {
		t.Fatalf("reference due_timers: %v", err)
	}
	got, err := m.store.DueTimers(m.ctx, now)
	m.op()
	m.step(t, "due_timers now=%v (%d due)", now, len(want))
	if err != nil {
		fail(t, "due_timers", err)
	}
	m.sawTimers(want)
	if err := sameDueTimers(want, got); err != nil {
		fail(t, "due_timers", err)
	}
}

// deleteTimer sweeps a timer with its current fire_at, a stale one (the timer
// was re-armed since the sweep read it), or one that does not exist.
func (m *machine) deleteTimer(t *rapid.T) {
	id := rapid.SampledFrom(executionIDs).Draw(t, "id")
	path := rapid.SampledFrom(timerPaths).Draw(t, "path")
	fireAt := rapid.SampledFrom(fireTimes).Draw(t, "fire_at")
	due, _ := m.ref.DueTimers(m.ctx, math.Inf(1))
	m.sawTimers(due)
	switch rapid.IntRange(0, 2).Draw(t, "sweep") {
	case 1: // the timer as it is now
		for _, d := range due {
			if d.ExecutionID == id && d.Path == path {
				fireAt = d.FireAt
			}
		}
	case 2: // a stale sweep: a timer as a sweep saw it before it was re-armed
		if stale := m.staleTimers(due); len(stale) > 0 {
			d := rapid.SampledFrom(stale).Draw(t, "stale_timer")
			id, path, fireAt = d.ExecutionID, d.Path, d.FireAt
		}
	}
	m.step(t, "delete_timer %q %q fire_at=%v", id, path, fireAt)
	if err := m.ref.DeleteTimer(m.ctx, id, path, fireAt); err != nil {
		t.Fatalf("reference delete_timer: %v", err)
	}
	if err := m.store.DeleteTimer(m.ctx, id, path, fireAt); err != nil {
		fail(t, "delete_timer", err)
	}
	m.op()
}

func (m *machine) appendTrace(t *rapid.T) {
	id := m.drawTraceWriteID(t)
	entry := drawObject(t, "entry")
	m.step(t, "append_trace %q %s", id, entry)
	if err := m.ref.AppendTrace(m.ctx, id, entry); err != nil {
		t.Fatalf("reference append_trace: %v", err)
	}
	if err := m.store.AppendTrace(m.ctx, id, entry); err != nil {
		fail(t, "append_trace", err)
	}
	m.op()
}

func (m *machine) readTrace(t *rapid.T) {
	id := m.drawTraceReadID(t)
	want, err := m.ref.ReadTrace(m.ctx, id)
	if err != nil {
		t.Fatalf("reference read_trace: %v", err)
	}
	got, err := m.store.ReadTrace(m.ctx, id)
	m.op()
	m.step(t, "read_trace %q (%d entries)", id, len(want))
	if err != nil {
		fail(t, "read_trace", err)
	}
	if err := sameTrace(want, got); err != nil {
		fail(t, "read_trace", err)
	}
}

// invariant compares all six tables after every step, and checks that no seq
// the store ever issued is issued again.
func (m *machine) invariant(t *rapid.T) {
	var want *model.Dump
	var err error
	op := "tables"
	if _, ok := m.store.(model.Dumper); ok {
		want, err = m.ref.Dump(m.ctx)
	} else {
		want, err = observe(m.ctx, m.ref) // compare like with like
		// Without Dump the tables are what the store's reads return, so a
		// difference may be a read that is wrong (a stale load) rather than
		// a write: say which reads.
		op = "tables (read through load, is_processed, read_trace, pending_outbox, pending_spawns, due_timers: the store has no Dump)"
	}
	if err != nil {
		t.Fatalf("reference tables: %v", err)
	}
	got, err := tables(m.ctx, m.store)
	if err != nil {
		fail(t, op, err)
	}
	if diff := model.Diff(want, got, model.DiffOptions{}); len(diff) > 0 {
		fail(t, op, fmt.Errorf("%d differences:\n  %s", len(diff), joinLines(diff)))
	}
	if err := m.outboxSeqs.observe("outbox", seqsOf(got.Outbox, func(r model.OutboxRow) int64 { return r.Seq })); err != nil {
		fail(t, op, err)
	}
	if err := m.spawnSeqs.observe("spawns", seqsOf(got.Spawns, func(r model.SpawnRow) int64 { return r.Seq })); err != nil {
		fail(t, op, err)
	}
}

// seqLedger remembers the seqs a queue has shown, to prove none is issued
// twice.
type seqLedger struct {
	pending map[int64]bool // the seqs of the last observation
	gone    map[int64]bool // seqs shown once and since removed (acknowledged)
	max     int64          // the highest seq ever shown
}

// observe takes the seqs pending now. A seq that was pending before is the
// same entry; any other must be above every seq shown so far: an acked seq
// coming back is a new entry under a reused seq (an INTEGER PRIMARY KEY
// without AUTOINCREMENT does that to the newest entry once it is acked), and
// a late ack of the old entry would then remove the new one.
func (l *seqLedger) observe(table string, seqs []int64) error {
	if l.gone == nil {
		l.gone = map[int64]bool{}
	}
	seqs = slices.Sorted(slices.Values(seqs))
	now := make(map[int64]bool, len(seqs))
	for _, seq := range seqs {
		now[seq] = true
	}
	for seq := range l.pending {
		if !now[seq] {
			l.gone[seq] = true
		}
	}
	for _, seq := range seqs {
		switch {
		case l.pending[seq]:
		case l.gone[seq]:
			return fmt.Errorf("%s: seq %d was acknowledged and is pending again: a new entry reused its seq (seqs must never be reused)", table, seq)
		case seq <= l.max:
			return fmt.Errorf("%s: new entry got seq %d, but seq %d was issued before (seqs must be monotonic, never reused)", table, seq, l.max)
		default:
			l.max = seq
		}
	}
	l.pending = now
	return nil
}

func seqsOf[R any](rows []R, seq func(R) int64) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = seq(r)
	}
	return out
}

func joinLines(lines []string) string {
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}

// sawTimers remembers timers a sweep saw.
func (m *machine) sawTimers(due []model.DueTimer) {
	for _, d := range due {
		if !slices.Contains(m.seenTimers, d) {
			m.seenTimers = append(m.seenTimers, d)
		}
	}
}

// staleTimers are the timers a sweep saw that have been re-armed since:
// the timer at the same execution and path now fires at another time. A
// sweep that deletes one of these must leave the re-armed timer alone
// (delete_timer deletes only a timer that still holds the fire_at it was
// given), which a uniform draw of fire times rarely puts to the test.
func (m *machine) staleTimers(now []model.DueTimer) []model.DueTimer {
	var stale []model.DueTimer
	for _, seen := range m.seenTimers {
		for _, d := range now {
			if d.ExecutionID == seen.ExecutionID && d.Path == seen.Path && d.FireAt != seen.FireAt {
				stale = append(stale, seen)
				break
			}
		}
	}
	return stale
}
