package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// step is one operation; it returns what the operation returned.
type step struct {
	name string
	run  func(ctx context.Context, s model.Store) (any, error)
}

// exeAt returns a new execution value, so each store gets its own.
func exeAt(id string, version int64, mods ...func(*model.Execution)) *model.Execution {
	e := &model.Execution{ID: id, DefinitionID: "def", Version: version, Status: "running", ActivePath: "root/a",
		Context: json.RawMessage(`{"n": 1, "b": [true, null], "s": "<&>"}`)}
	for _, m := range mods {
		m(e)
	}
	return e
}

func commit(e *model.Execution, b model.Batch) func(context.Context, model.Store) (any, error) {
	return func(ctx context.Context, s model.Store) (any, error) {
		e := e.Clone()
		err := s.Commit(ctx, e, b)
		return e.Version, err
	}
}

// script touches every operation and table: inserts, updates, conflicts,
// invalid batches, every side-write, the trace trim at a cap of 3, acks,
// stale and fresh timer sweeps, and every read with its filters and pages.
func script() []step {
	ev := func(id string) model.Event {
		return model.Event{ID: id, Name: "go", Data: json.RawMessage(`{"z": 1, "a": "<&>"}`)}
	}
	child := func(e *model.Execution) {
		e.ID, e.ParentID, e.DefinitionID, e.Status, e.Outcome = "b", model.Ptr("a"), "def2", "done", model.Ptr("ok")
	}
	steps := []step{
		{"commit a new", commit(exeAt("a", 0), model.Batch{
			Emits:            []model.Emit{{Event: ev("e1")}, {TargetID: model.Ptr("b"), Event: ev("e2")}},
			ProcessedEventID: model.Ptr("p1"),
			Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "t1", FireAt: 10}, {Action: model.TimerSchedule, Path: "t2", FireAt: 20.5}},
			Spawns:           []model.Spawn{{ChildID: "b", RootPath: "r1"}, {ChildID: "c", RootPath: "r2", Context: json.RawMessage(`{"k": [1, 2]}`)}},
			Trace:            json.RawMessage(`{"step": 1}`),
		})},
		{"commit child b new", commit(exeAt("b", 0, child), model.Batch{})},
		{"commit a again", commit(exeAt("a", 1, func(e *model.Execution) { e.ActivePath = "root/b" }), model.Batch{
			Emits:            []model.Emit{{Event: ev("e3")}},
			ProcessedEventID: model.Ptr("p2"),
			Timers:           []model.TimerOp{{Action: model.TimerCancel, Path: "t1"}, {Action: model.TimerSchedule, Path: "t2", FireAt: 5}, {Action: model.TimerCancel, Path: "none"}},
			Trace:            json.RawMessage(`{"step": 2}`),
		})},
		{"stale commit a", commit(exeAt("a", 1), model.Batch{Emits: []model.Emit{{Event: ev("leak")}}})},
		{"commit missing at 3", commit(exeAt("zz", 3), model.Batch{Emits: []model.Emit{{Event: ev("leak")}}})},
		{"insert over existing", commit(exeAt("b", 0), model.Batch{})},
		{"invalid trace", commit(exeAt("a", 2), model.Batch{Trace: json.RawMessage(`[1]`)})},
		{"invalid timer", commit(exeAt("a", 2), model.Batch{Timers: []model.TimerOp{{Action: "snooze", Path: "x"}}})},
		{"processed again", commit(exeAt("a", 2), model.Batch{ProcessedEventID: model.Ptr("p1")})},
		{"save b", func(ctx context.Context, s model.Store) (any, error) {
			e := exeAt("b", 1, child)
			err := s.Save(ctx, e)
			return e.Version, err
		}},
		{"ack outbox 1", func(ctx context.Context, s model.Store) (any, error) { return nil, s.AckOutbox(ctx, 1) }},
		{"ack outbox absent", func(ctx context.Context, s model.Store) (any, error) { return nil, s.AckOutbox(ctx, 999) }},
		{"ack spawn 1", func(ctx context.Context, s model.Store) (any, error) { return nil, s.AckSpawn(ctx, 1) }},
		{"stale timer sweep", func(ctx context.Context, s model.Store) (any, error) { return nil, s.DeleteTimer(ctx, "a", "t2", 20.5) }},
		{"due timers", func(ctx context.Context, s model.Store) (any, error) { return s.DueTimers(ctx, 15) }},
		{"fresh timer sweep", func(ctx context.Context, s model.Store) (any, error) { return nil, s.DeleteTimer(ctx, "a", "t2", 5) }},
		{"due timers after sweep", func(ctx context.Context, s model.Store) (any, error) { return s.DueTimers(ctx, 15) }},
		{"append trace ghost", func(ctx context.Context, s model.Store) (any, error) { return nil, s.AppendTrace(ctx, "ghost", nil) }},
		{"append trace array", func(ctx context.Context, s model.Store) (any, error) {
			return nil, s.AppendTrace(ctx, "a", json.RawMessage(`[]`))
		}},
	}
	for i := range 4 {
		steps = append(steps, step{"append trace a", func(ctx context.Context, s model.Store) (any, error) {
			return nil, s.AppendTrace(ctx, "a", json.RawMessage(fmt.Sprintf(`{"i": %d}`, i)))
		}})
	}
	return append(steps, reads()...)
}

// reads are the read operations the script ends with.
func reads() []step {
	list := func(f model.ListFilter) func(context.Context, model.Store) (any, error) {
		return func(ctx context.Context, s model.Store) (any, error) { return s.ListExecutions(ctx, f) }
	}
	return []step{
		{"load a", func(ctx context.Context, s model.Store) (any, error) { return s.Load(ctx, "a") }},
		{"load missing", func(ctx context.Context, s model.Store) (any, error) { return s.Load(ctx, "nope") }},
		{"load for event", func(ctx context.Context, s model.Store) (any, error) {
			e, done, err := s.LoadForEvent(ctx, "a", "p2")
			return []any{e, done}, err
		}},
		{"load for new event", func(ctx context.Context, s model.Store) (any, error) {
			e, done, err := s.LoadForEvent(ctx, "b", "p2")
			return []any{e, done}, err
		}},
		{"load missing for event", func(ctx context.Context, s model.Store) (any, error) {
			e, done, err := s.LoadForEvent(ctx, "nope", "p1")
			return []any{e, done}, err
		}},
		{"is processed", func(ctx context.Context, s model.Store) (any, error) { return s.IsProcessed(ctx, "a", "p1") }},
		{"is not processed", func(ctx context.Context, s model.Store) (any, error) { return s.IsProcessed(ctx, "b", "p1") }},
		{"list page 1", list(model.ListFilter{Limit: 1})},
		{"list page 2", list(model.ListFilter{Limit: 1, Cursor: model.EncodeOffsetCursor(1)})},
		{"list past end", list(model.ListFilter{Limit: 5, Cursor: model.EncodeOffsetCursor(7)})},
		{"list all", list(model.ListFilter{Limit: 10})},
		{"list done", list(model.ListFilter{Limit: 10, Statuses: []string{"done", "failed"}})},
		{"list empty statuses", list(model.ListFilter{Limit: 10, Statuses: []string{}})},
		{"list roots", list(model.ListFilter{Limit: 10, RootsOnly: true})},
		{"list def2", list(model.ListFilter{Limit: 10, DefinitionID: model.Ptr("def2")})},
		{"list nothing", list(model.ListFilter{Limit: 10, DefinitionID: model.Ptr("def2"), RootsOnly: true})},
		{"list limit 0", list(model.ListFilter{Limit: 0})},
		{"list bad cursor", list(model.ListFilter{Limit: 1, Cursor: "garbage!"})},
		{"pending outbox", func(ctx context.Context, s model.Store) (any, error) { return s.PendingOutbox(ctx) }},
		{"pending spawns", func(ctx context.Context, s model.Store) (any, error) { return s.PendingSpawns(ctx) }},
		{"read trace a", func(ctx context.Context, s model.Store) (any, error) { return s.ReadTrace(ctx, "a") }},
		{"read trace ghost", func(ctx context.Context, s model.Store) (any, error) { return s.ReadTrace(ctx, "ghost") }},
		{"read trace none", func(ctx context.Context, s model.Store) (any, error) { return s.ReadTrace(ctx, "none") }},
	}
}

// MatchesReference runs the script on s and on model.Reference, compares
// every result, then compares the two dumps, seq values included (s was just
// reset, so its AUTOINCREMENT counters must start again at 1).
func MatchesReference(t *testing.T, s Full) {
	ctx := Fresh(t, s, 3)
	ref := model.NewReference(model.Config{TraceMax: 3})
	for i, st := range script() {
		want, wantErr := st.run(ctx, ref)
		got, gotErr := st.run(ctx, s)
		if !sameError(wantErr, gotErr) {
			t.Errorf("step %d (%s): error %v, want %v", i, st.name, gotErr, wantErr)
			continue
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("step %d (%s):\n got %#v\nwant %#v", i, st.name, got, want)
		}
	}
	want, err := ref.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Dump(ctx)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	for _, d := range model.Diff(want, got, model.DiffOptions{ExactSeqs: true}) {
		t.Error(d)
	}
	if len(got.Executions) == 0 || len(got.Outbox) == 0 || len(got.Trace) == 0 {
		t.Errorf("the script wrote too little to compare: %+v", got)
	}
}
