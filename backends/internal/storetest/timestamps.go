package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TimestampText checks that text which looks like a timestamp comes back as
// the same text from every read: go-libsql turns such TEXT into time.Time.
func TimestampText(t *testing.T, s Full) {
	ctx := Fresh(t, s, model.DefaultTraceMax)
	const (
		id     = "2024-01-02 03:04:05"
		parent = "2024-01-02"
		event  = "2024-01-02T03:04:05Z"
		path   = "2024-01-02 03:04"
	)
	exe := &model.Execution{ID: id, DefinitionID: "2024-01-02T03:04:05.123456789", Status: "2024-01-02",
		ActivePath: path, ParentID: model.Ptr(parent), Outcome: model.Ptr("2024-01-02 03:04:05.5")}
	b := model.Batch{
		Emits:            []model.Emit{{TargetID: model.Ptr(parent), Event: model.Event{ID: event, Name: "tick"}}},
		ProcessedEventID: model.Ptr(event),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: path, FireAt: 1.5}},
		Spawns:           []model.Spawn{{ChildID: parent, RootPath: path}},
		Trace:            json.RawMessage(`{"at": "2024-01-02"}`),
	}
	if err := s.Commit(ctx, exe, b); err != nil {
		t.Fatalf("commit: %v", err)
	}
	ref := model.NewReference(model.DefaultConfig())
	if err := ref.Commit(ctx, &model.Execution{ID: id, DefinitionID: exe.DefinitionID, Status: exe.Status,
		ActivePath: path, ParentID: exe.ParentID, Outcome: exe.Outcome}, b); err != nil {
		t.Fatal(err)
	}

	got, err := s.Load(ctx, id)
	if err != nil || got == nil || got.ID != id || *got.ParentID != parent {
		t.Errorf("load: %+v, %v", got, err)
	}
	_, done, err := s.LoadForEvent(ctx, id, event)
	if err != nil || !done {
		t.Errorf("load for event: %v, %v", done, err)
	}
	page, err := s.ListExecutions(ctx, model.ListFilter{Limit: 5, DefinitionID: &exe.DefinitionID, Statuses: []string{exe.Status}})
	if want := []model.ExecutionSummary{exe.Summary()}; err != nil || !reflect.DeepEqual(page.Items, want) {
		t.Errorf("list: %+v, %v; want %+v", page.Items, err, want)
	}
	out, err := s.PendingOutbox(ctx)
	if err != nil || len(out) != 1 || *out[0].TargetID != parent || out[0].Event.ID != event {
		t.Errorf("pending outbox: %+v, %v", out, err)
	}
	spawns, err := s.PendingSpawns(ctx)
	if err != nil || len(spawns) != 1 || spawns[0].ParentID != id || spawns[0].ChildID != parent || spawns[0].RootPath != path {
		t.Errorf("pending spawns: %+v, %v", spawns, err)
	}
	due, err := s.DueTimers(ctx, 2)
	if want := []model.DueTimer{{ExecutionID: id, Path: path, FireAt: 1.5}}; err != nil || !reflect.DeepEqual(due, want) {
		t.Errorf("due timers: %+v, %v; want %+v", due, err, want)
	}
	want, _ := ref.Dump(ctx)
	dump, err := s.Dump(ctx)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	for _, d := range model.Diff(want, dump, model.DiffOptions{}) {
		t.Error(d)
	}
}
