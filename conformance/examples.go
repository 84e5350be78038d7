package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/storecheck/storecheck/conformance/internal/engine"
	"github.com/storecheck/storecheck/model"
)

// example is one named example test. traceMax, when set, overrides the
// default trace cap.
type example struct {
	name     string
	traceMax *int
	run      func(ctx context.Context, t *testing.T, s model.Store)
}

// withConfig is ex as the engine runs it: on a store with the default
// configuration, or traceMax's trace cap.
func (ex example) withConfig() engine.Example[model.Store, model.Config] {
	cfg := model.DefaultConfig()
	if ex.traceMax != nil {
		cfg.TraceMax = *ex.traceMax
	}
	return engine.Example[model.Store, model.Config]{Name: ex.name, Config: cfg, Run: ex.run}
}

// examples lists every example, in the order a reader meets the contract.
func examples() []example {
	list := []example{
		{name: "FirstCommitInsertsAtVersion1", run: exFirstCommit},
		{name: "LoadMissingIsNone", run: exLoadMissing},
		{name: "RoundTripKeepsEveryField", run: exRoundTrip},
		{name: "StaleWriteConflicts", run: exStaleWrite},
		{name: "AbsentRowWithNonZeroVersionConflicts", run: exAbsentNonZero},
		{name: "ConflictWritesNothing", run: exConflictWritesNothing},
		{name: "CommitWritesWholeBatch", run: exWholeBatch},
		{name: "DedupeIsIdempotent", run: exDedupe},
		{name: "LoadForEventOnMissingExecution", run: exLoadForEventMissing},
		{name: "TimerUpsertAndCancel", run: exTimerUpsertCancel},
		{name: "DueTimersInclusiveSoonestFirst", run: exDueTimers},
		{name: "StaleSweepKeepsRearmedTimer", run: exStaleSweep},
		{name: "AcksAreIdempotent", run: exAcks},
		{name: "SeqsNeverReused", run: exSeqsNeverReused},
		{name: "ListFiltersAndPages", run: exList},
		{name: "ListRejectsBadLimit", run: exListBadLimit},
		{name: "TimestampLikeTextStaysText", run: exTimestampText},
		{name: "StandaloneTraceAppend", run: exStandaloneTrace},
	}
	for _, n := range []int{0, 1, 3, model.DefaultTraceMax} {
		list = append(list, example{
			name: fmt.Sprintf("TraceRing/max=%d", n), traceMax: model.Ptr(n),
			run: func(ctx context.Context, t *testing.T, s model.Store) { exTraceRing(ctx, t, s, n) },
		})
	}
	return list
}

func newExecution(id string) *model.Execution {
	return &model.Execution{ID: id, DefinitionID: "def", Status: "running", ActivePath: "root",
		Context: json.RawMessage(`{"n":0}`)}
}

func mustCommit(ctx context.Context, t *testing.T, s model.Store, exe *model.Execution, b model.Batch) {
	t.Helper()
	if err := s.Commit(ctx, exe, b); err != nil {
		t.Fatalf("commit %q from version %d: %v", exe.ID, exe.Version, err)
	}
}

func mustLoad(ctx context.Context, t *testing.T, s model.Store, id string) *model.Execution {
	t.Helper()
	exe, err := s.Load(ctx, id)
	if err != nil {
		t.Fatalf("load %q: %v", id, err)
	}
	return exe
}

func wantConflict(t *testing.T, err error, id string, expected int64, found *int64) {
	t.Helper()
	want := &model.StoreConflict{ID: id, Expected: expected, Found: found}
	c, ok := model.AsConflict(err)
	if !ok {
		t.Fatalf("want %v, got %v", want, err)
	}
	if c.ID != id || c.Expected != expected || (c.Found == nil) != (found == nil) || (found != nil && *c.Found != *found) {
		t.Fatalf("want %v, got %v", want, c)
	}
}

func exFirstCommit(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, model.Batch{})
	if exe.Version != 1 {
		t.Fatalf("caller's version after first commit: want 1, got %d", exe.Version)
	}
	got := mustLoad(ctx, t, s, "e1")
	if got == nil || got.Version != 1 {
		t.Fatalf("stored version after first commit: want 1, got %s", describeExecution(got))
	}
	mustCommit(ctx, t, s, exe, model.Batch{})
	if got := mustLoad(ctx, t, s, "e1"); got.Version != 2 || exe.Version != 2 {
		t.Fatalf("second commit: want version 2 stored and in hand, got %d and %d", got.Version, exe.Version)
	}
}

func exLoadMissing(ctx context.Context, t *testing.T, s model.Store) {
	if got := mustLoad(ctx, t, s, "nobody"); got != nil {
		t.Fatalf("load of a missing execution: want none, got %s", describeExecution(got))
	}
}

func exRoundTrip(ctx context.Context, t *testing.T, s model.Store) {
	exe := &model.Execution{
		ID: "child", DefinitionID: "def-x", Status: "done", Outcome: model.Ptr("ok"),
		ActivePath: "root.b.c", ParentID: model.Ptr("parent"),
		Context: json.RawMessage(`{"z": [1, 2.5, "x"], "a": {"nested": true}, "html": "<&>"}`),
		Extra:   map[string]json.RawMessage{"history": json.RawMessage(`["start","b"]`), "invoke_seq": json.RawMessage(`7`)},
	}
	mustCommit(ctx, t, s, exe.Clone(), model.Batch{})
	want := exe.Clone()
	want.Version = 1
	if err := sameExecution(want, mustLoad(ctx, t, s, "child")); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	null := newExecution("root")
	mustCommit(ctx, t, s, null, model.Batch{})
	got := mustLoad(ctx, t, s, "root")
	if got.Outcome != nil || got.ParentID != nil {
		t.Fatalf("null outcome and parent_id must load as null, got outcome=%v parent_id=%v", got.Outcome, got.ParentID)
	}
}

func exStaleWrite(ctx context.Context, t *testing.T, s model.Store) {
	a := newExecution("e1")
	mustCommit(ctx, t, s, a, model.Batch{})
	b := a.Clone()
	mustCommit(ctx, t, s, a, model.Batch{}) // a: 1 -> 2
	err := s.Commit(ctx, b, model.Batch{})  // b still at 1
	wantConflict(t, err, "e1", 1, model.Ptr[int64](2))
	if b.Version != 1 {
		t.Fatalf("caller's version after a conflict: want 1 (unchanged), got %d", b.Version)
	}
	if err := s.Save(ctx, b); err == nil {
		t.Fatalf("save from a stale version: want a StoreConflict, got success")
	}
	if b.Version != 1 {
		t.Fatalf("caller's version after a failed save: want 1 (unchanged), got %d", b.Version)
	}
}

func exAbsentNonZero(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("ghost")
	exe.Version = 3
	err := s.Commit(ctx, exe, model.Batch{})
	wantConflict(t, err, "ghost", 3, nil)
	if exe.Version != 3 {
		t.Fatalf("caller's version after a conflict: want 3, got %d", exe.Version)
	}
	if got := mustLoad(ctx, t, s, "ghost"); got != nil {
		t.Fatalf("a conflicting commit created the row: %s", describeExecution(got))
	}
}

func fullBatch(id string) model.Batch {
	return model.Batch{
		Emits: []model.Emit{
			{TargetID: model.Ptr("other"), Event: model.Event{ID: id + "-out1", Name: "tick", Data: json.RawMessage(`{"k":1}`)}},
			{Event: model.Event{ID: id + "-out2", Name: "done"}},
		},
		ProcessedEventID: model.Ptr(id + "-in"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "wait", FireAt: 10.5}},
		Spawns:           []model.Spawn{{ChildID: id + "-child", RootPath: "p", Context: json.RawMessage(`{"x":1}`)}},
		Trace:            json.RawMessage(`{"step":"` + id + `"}`),
	}
}

func exConflictWritesNothing(ctx context.Context, t *testing.T, s model.Store) {
	a := newExecution("e1")
	mustCommit(ctx, t, s, a, model.Batch{})
	loser := a.Clone()
	mustCommit(ctx, t, s, a, model.Batch{})
	before, err := tables(ctx, s, "loser-in")
	if err != nil {
		t.Fatal(err)
	}
	loser.Status = "loser"
	err = s.Commit(ctx, loser, fullBatch("loser"))
	wantConflict(t, err, "e1", 1, model.Ptr[int64](2))
	after, err := tables(ctx, s, "loser-in")
	if err != nil {
		t.Fatal(err)
	}
	if diff := model.Diff(before, after, model.DiffOptions{ExactSeqs: true}); len(diff) > 0 {
		t.Fatalf("atomicity: a commit that lost its CAS wrote:\n  %s", joinLines(diff))
	}
}

func exWholeBatch(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, fullBatch("w"))
	outbox, err := s.PendingOutbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(outbox) != 2 || outbox[0].Event.ID != "w-out1" || outbox[1].Event.ID != "w-out2" ||
		outbox[0].TargetID == nil || *outbox[0].TargetID != "other" || outbox[1].TargetID != nil {
		t.Fatalf("outbox after commit: want w-out1 (to other) then w-out2 (no target), got %+v", outbox)
	}
	if done, err := s.IsProcessed(ctx, "e1", "w-in"); err != nil || !done {
		t.Fatalf("dedupe marker after commit: want processed, got %v (%v)", done, err)
	}
	timers, err := s.DueTimers(ctx, 10.5)
	if err != nil || len(timers) != 1 || timers[0] != (model.DueTimer{ExecutionID: "e1", Path: "wait", FireAt: 10.5}) {
		t.Fatalf("timer after commit: want (e1, wait, 10.5), got %+v (%v)", timers, err)
	}
	spawns, err := s.PendingSpawns(ctx)
	if err != nil || len(spawns) != 1 || spawns[0].ParentID != "e1" || spawns[0].ChildID != "w-child" || spawns[0].RootPath != "p" {
		t.Fatalf("spawn after commit: want (e1 -> w-child at p), got %+v (%v)", spawns, err)
	}
	trace, err := s.ReadTrace(ctx, "e1")
	if err != nil || len(trace) != 1 || trace[0].Index != 0 {
		t.Fatalf("trace after commit: want one step at index 0, got %+v (%v)", trace, err)
	}
}

func exDedupe(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	b := model.Batch{ProcessedEventID: model.Ptr("ev")}
	mustCommit(ctx, t, s, exe, b)
	mustCommit(ctx, t, s, exe, b) // a re-delivery records nothing new and is not an error
	exe2, done, err := s.LoadForEvent(ctx, "e1", "ev")
	if err != nil || exe2 == nil || !done {
		t.Fatalf("load_for_event after dedupe: want (execution, true), got (%s, %v, %v)", describeExecution(exe2), done, err)
	}
	if _, done, _ := s.LoadForEvent(ctx, "e1", "other"); done {
		t.Fatalf("load_for_event of an unprocessed event: want false")
	}
	got, err := tables(ctx, s, "ev", "other")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Processed) != 1 {
		t.Fatalf("dedupe ledger: want one row, got %+v", got.Processed)
	}
}

func exLoadForEventMissing(ctx context.Context, t *testing.T, s model.Store) {
	exe, done, err := s.LoadForEvent(ctx, "nobody", "ev")
	if err != nil || exe != nil || done {
		t.Fatalf("load_for_event of a missing execution: want (none, false), got (%s, %v, %v)", describeExecution(exe), done, err)
	}
}

func exTimerUpsertCancel(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "a", FireAt: 5}, {Action: model.TimerSchedule, Path: "b", FireAt: 6}}})
	mustCommit(ctx, t, s, exe, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "a", FireAt: 7}, {Action: model.TimerCancel, Path: "b"}, {Action: model.TimerCancel, Path: "never"}}})
	due, err := s.DueTimers(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0] != (model.DueTimer{ExecutionID: "e1", Path: "a", FireAt: 7}) {
		t.Fatalf("after re-arming a at 7 and cancelling b: want [(e1, a, 7)], got %+v", due)
	}
}

func exDueTimers(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, model.Batch{Timers: []model.TimerOp{
		{Action: model.TimerSchedule, Path: "late", FireAt: 30},
		{Action: model.TimerSchedule, Path: "now", FireAt: 20},
		{Action: model.TimerSchedule, Path: "early", FireAt: 10},
	}})
	due, err := s.DueTimers(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[0].Path != "early" || due[1].Path != "now" {
		t.Fatalf("due at 20: want [early@10, now@20] (fire_at <= now, soonest first), got %+v", due)
	}
	if due, _ := s.DueTimers(ctx, 9.999); len(due) != 0 {
		t.Fatalf("due at 9.999: want none, got %+v", due)
	}
}

func exStaleSweep(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "a", FireAt: 5}}})
	swept, err := s.DueTimers(ctx, 5) // the sweeper reads (e1, a, 5) ...
	if err != nil || len(swept) != 1 {
		t.Fatalf("due timers: want one, got %+v (%v)", swept, err)
	}
	mustCommit(ctx, t, s, exe, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "a", FireAt: 50}}}) // ... the engine re-arms ...
	if err := s.DeleteTimer(ctx, "e1", "a", swept[0].FireAt); err != nil {                                                 // ... and the stale sweep deletes
		t.Fatal(err)
	}
	if due, _ := s.DueTimers(ctx, 100); len(due) != 1 || due[0].FireAt != 50 {
		t.Fatalf("a stale sweep deleted the re-armed timer: want [(e1, a, 50)], got %+v", due)
	}
	if err := s.DeleteTimer(ctx, "e1", "a", 50); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.DueTimers(ctx, 100); len(due) != 0 {
		t.Fatalf("a sweep with the current fire_at must delete: got %+v", due)
	}
}

func exAcks(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, fullBatch("a"))
	outbox, _ := s.PendingOutbox(ctx)
	spawns, _ := s.PendingSpawns(ctx)
	if len(outbox) != 2 || len(spawns) != 1 {
		t.Fatalf("want 2 pending emits and 1 spawn, got %d and %d", len(outbox), len(spawns))
	}
	for range 2 { // the second ack of the same seq is a no-op
		if err := s.AckOutbox(ctx, outbox[0].Seq); err != nil {
			t.Fatalf("ack_outbox %d: %v", outbox[0].Seq, err)
		}
		if err := s.AckSpawn(ctx, spawns[0].Seq); err != nil {
			t.Fatalf("ack_spawn %d: %v", spawns[0].Seq, err)
		}
	}
	if err := s.AckOutbox(ctx, 1<<40); err != nil {
		t.Fatalf("ack of a seq never issued must be a no-op, got %v", err)
	}
	left, _ := s.PendingOutbox(ctx)
	if len(left) != 1 || left[0].Seq != outbox[1].Seq {
		t.Fatalf("after acking the first emit: want only seq %d pending, got %+v", outbox[1].Seq, left)
	}
	if left, _ := s.PendingSpawns(ctx); len(left) != 0 {
		t.Fatalf("after acking the spawn: want none pending, got %+v", left)
	}
}

func exSeqsNeverReused(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	one := model.Batch{Emits: []model.Emit{{Event: model.Event{Name: "x"}}}, Spawns: []model.Spawn{{ChildID: "c", RootPath: "p"}}}
	mustCommit(ctx, t, s, exe, one)
	first, _ := s.PendingOutbox(ctx)
	firstSpawn, _ := s.PendingSpawns(ctx)
	if err := errors.Join(s.AckOutbox(ctx, first[0].Seq), s.AckSpawn(ctx, firstSpawn[0].Seq)); err != nil {
		t.Fatal(err)
	}
	mustCommit(ctx, t, s, exe, one)
	second, _ := s.PendingOutbox(ctx)
	secondSpawn, _ := s.PendingSpawns(ctx)
	if len(second) != 1 || second[0].Seq <= first[0].Seq {
		t.Fatalf("outbox seq after acking the last entry: want above %d, got %+v (a reused seq lets a late ack delete the wrong entry)", first[0].Seq, second)
	}
	if len(secondSpawn) != 1 || secondSpawn[0].Seq <= firstSpawn[0].Seq {
		t.Fatalf("spawn seq after acking the last entry: want above %d, got %+v", firstSpawn[0].Seq, secondSpawn)
	}
}

func exList(ctx context.Context, t *testing.T, s model.Store) {
	// e0..e6: alternate definitions and statuses; e5 and e6 are children.
	for i := range 7 {
		exe := newExecution(fmt.Sprintf("e%d", i))
		exe.DefinitionID = []string{"def-a", "def-b"}[i%2]
		exe.Status = []string{"running", "done", "failed"}[i%3]
		if i >= 5 {
			exe.ParentID = model.Ptr("e0")
		}
		mustCommit(ctx, t, s, exe, model.Batch{})
	}
	cases := []struct {
		f    model.ListFilter
		want []string
	}{
		{model.ListFilter{}, []string{"e0", "e1", "e2", "e3", "e4", "e5", "e6"}},
		{model.ListFilter{DefinitionID: model.Ptr("def-a")}, []string{"e0", "e2", "e4", "e6"}},
		{model.ListFilter{Statuses: []string{"done", "failed"}}, []string{"e1", "e2", "e4", "e5"}},
		{model.ListFilter{RootsOnly: true}, []string{"e0", "e1", "e2", "e3", "e4"}},
		{model.ListFilter{DefinitionID: model.Ptr("def-b"), Statuses: []string{"running"}, RootsOnly: true}, []string{"e3"}},
		{model.ListFilter{DefinitionID: model.Ptr("nope")}, nil},
	}
	for _, c := range cases {
		for limit := 1; limit <= len(c.want)+1; limit++ {
			f := c.f
			f.Limit = limit
			var got []string
			for page := 0; ; page++ {
				if page > 8 {
					t.Fatalf("filter %+v limit %d: pagination does not end", c.f, limit)
				}
				p, err := s.ListExecutions(ctx, f)
				if err != nil {
					t.Fatalf("list %+v: %v", f, err)
				}
				if len(p.Items) > limit {
					t.Fatalf("list limit %d returned %d items", limit, len(p.Items))
				}
				for _, it := range p.Items {
					got = append(got, it.ID)
				}
				if p.Next == "" {
					break
				}
				f.Cursor = p.Next
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("filter %+v paged by %d: want %v, got %v", c.f, limit, c.want, got)
			}
		}
	}
	p, err := s.ListExecutions(ctx, model.ListFilter{Limit: 1, Statuses: []string{"done"}})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("list: %v", err)
	}
	want := model.ExecutionSummary{ID: "e1", DefinitionID: "def-b", Version: 1, Status: "done", ActivePath: "root"}
	if describeSummary(p.Items[0]) != describeSummary(want) {
		t.Fatalf("summary: want %s, got %s", describeSummary(want), describeSummary(p.Items[0]))
	}
}

func exListBadLimit(ctx context.Context, t *testing.T, s model.Store) {
	for _, limit := range []int{0, -1} {
		if _, err := s.ListExecutions(ctx, model.ListFilter{Limit: limit}); err == nil {
			t.Fatalf("list with limit %d: want an error", limit)
		}
	}
}

func exTimestampText(ctx context.Context, t *testing.T, s model.Store) {
	const id = "2024-01-02 03:04:05"
	exe := newExecution(id)
	exe.DefinitionID = "2024-06-01T00:00:00Z"
	exe.Status = "2025-01-01"
	mustCommit(ctx, t, s, exe, model.Batch{
		Emits:            []model.Emit{{TargetID: model.Ptr("2024-01-02T03:04:05Z"), Event: model.Event{Name: "2024-01-02"}}},
		ProcessedEventID: model.Ptr("2024-01-02 00:00:00"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "2024-01-02", FireAt: 1}},
		Spawns:           []model.Spawn{{ChildID: "2024-01-03 00:00:00", RootPath: "2024-01-04"}},
	})
	got := mustLoad(ctx, t, s, id)
	if got == nil || got.ID != id || got.DefinitionID != exe.DefinitionID || got.Status != "2025-01-01" {
		t.Fatalf("timestamp-like text: want it back unchanged, got %s", describeExecution(got))
	}
	p, err := s.ListExecutions(ctx, model.ListFilter{Limit: 5})
	if err != nil || len(p.Items) != 1 || p.Items[0].ID != id || p.Items[0].DefinitionID != exe.DefinitionID {
		t.Fatalf("timestamp-like text in list: got %+v (%v)", p.Items, err)
	}
	outbox, err := s.PendingOutbox(ctx)
	if err != nil || len(outbox) != 1 || *outbox[0].TargetID != "2024-01-02T03:04:05Z" {
		t.Fatalf("timestamp-like target id: got %+v (%v)", outbox, err)
	}
	due, err := s.DueTimers(ctx, 1)
	if err != nil || len(due) != 1 || due[0].ExecutionID != id || due[0].Path != "2024-01-02" {
		t.Fatalf("timestamp-like timer keys: got %+v (%v)", due, err)
	}
	spawns, err := s.PendingSpawns(ctx)
	if err != nil || len(spawns) != 1 || spawns[0].ParentID != id || spawns[0].ChildID != "2024-01-03 00:00:00" {
		t.Fatalf("timestamp-like spawn ids: got %+v (%v)", spawns, err)
	}
}

func exStandaloneTrace(ctx context.Context, t *testing.T, s model.Store) {
	exe := newExecution("e1")
	mustCommit(ctx, t, s, exe, model.Batch{Trace: json.RawMessage(`{"step":"commit"}`)})
	if err := s.AppendTrace(ctx, "e1", json.RawMessage(`{"step":"standalone"}`)); err != nil {
		t.Fatal(err)
	}
	mustCommit(ctx, t, s, exe, model.Batch{Trace: json.RawMessage(`{"step":"commit2"}`)})
	trace, err := s.ReadTrace(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, e := range trace {
		var v struct{ Step string }
		if err := json.Unmarshal(e.Entry, &v); err != nil {
			t.Fatalf("trace entry %d is not the JSON written: %v", e.Index, err)
		}
		steps = append(steps, fmt.Sprintf("%d:%s", e.Index, v.Step))
	}
	if fmt.Sprint(steps) != "[0:commit 1:standalone 2:commit2]" {
		t.Fatalf("trace: want [0:commit 1:standalone 2:commit2], got %v", steps)
	}
}

// exTraceRing appends 2*max+3 steps (7 when unbounded) and checks the ring
// keeps exactly the newest max of them with indices that kept growing.
func exTraceRing(ctx context.Context, t *testing.T, s model.Store, traceMax int) {
	exe := newExecution("e1")
	n := 2*traceMax + 3
	if traceMax == 0 {
		n = 7
	}
	for i := range n {
		mustCommit(ctx, t, s, exe, model.Batch{Trace: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
	}
	trace, err := s.ReadTrace(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	keep := n
	if traceMax > 0 {
		keep = min(traceMax, n)
	}
	if len(trace) != keep {
		t.Fatalf("trace_max=%d after %d steps: want %d entries, got %d", traceMax, n, keep, len(trace))
	}
	for j, e := range trace {
		wantIdx := int64(n - keep + j)
		var v struct{ I int64 }
		if err := json.Unmarshal(e.Entry, &v); err != nil {
			t.Fatal(err)
		}
		if e.Index != wantIdx || v.I != wantIdx {
			t.Fatalf("trace_max=%d entry %d: want index %d holding step %d, got index %d holding step %d", traceMax, j, wantIdx, wantIdx, e.Index, v.I)
		}
	}
	if other, _ := s.ReadTrace(ctx, "nobody"); len(other) != 0 {
		t.Fatalf("read_trace of an execution without steps: want none, got %+v", other)
	}
}
