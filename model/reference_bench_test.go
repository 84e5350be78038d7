package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/storecheck/storecheck/model"
)

func benchExecution(id string) *model.Execution {
	return &model.Execution{ID: id, DefinitionID: "def", Status: "running", ActivePath: "root.a",
		Context: json.RawMessage(`{"n":1,"note":"benchmark"}`)}
}

var benchBatch = model.Batch{
	Emits:            []model.Emit{{TargetID: model.Ptr("other"), Event: model.Event{ID: "x", Name: "tick"}}},
	ProcessedEventID: model.Ptr("ev"),
	Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "a", FireAt: 5}},
	Trace:            json.RawMessage(`{"step":1}`),
}

// BenchmarkReference measures the reference model's operations: it is the
// oracle of every conformance step, and the memory: backend.
func BenchmarkReference(b *testing.B) {
	ctx := context.Background()
	b.Run("Commit", func(b *testing.B) {
		r := model.NewReference(model.DefaultConfig())
		exe := benchExecution("e1")
		for b.Loop() {
			if err := r.Commit(ctx, exe, benchBatch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Conflict", func(b *testing.B) {
		r := model.NewReference(model.DefaultConfig())
		exe := benchExecution("e1")
		if err := r.Save(ctx, exe); err != nil {
			b.Fatal(err)
		}
		stale := benchExecution("e1")
		for b.Loop() {
			if _, ok := model.AsConflict(r.Commit(ctx, stale, benchBatch)); !ok {
				b.Fatal("want a conflict")
			}
		}
	})
	b.Run("Load", func(b *testing.B) {
		r := model.NewReference(model.DefaultConfig())
		if err := r.Save(ctx, benchExecution("e1")); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := r.Load(ctx, "e1"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ListPage", func(b *testing.B) {
		r := model.NewReference(model.DefaultConfig())
		for i := range 100 {
			if err := r.Save(ctx, benchExecution(fmt.Sprintf("e%03d", i))); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if _, err := r.ListExecutions(ctx, model.ListFilter{Limit: 10, Statuses: []string{"running"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DumpAndClone", func(b *testing.B) {
		r := model.NewReference(model.DefaultConfig())
		for i := range 10 {
			exe := benchExecution(fmt.Sprintf("e%d", i))
			if err := r.Commit(ctx, exe, benchBatch); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if _, err := r.Clone().Dump(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
