package storetest

import (
	"testing"

	"github.com/storecheck/storecheck/model"
)

// BenchCommit measures one commit (the CAS, one timer upsert, one trace
// step) by a single goroutine.
func BenchCommit(b *testing.B, s Full) {
	ctx := Fresh(b, s, model.DefaultTraceMax)
	exe := &model.Execution{ID: "bench", DefinitionID: "def", Status: "running", ActivePath: "root/a"}
	batch := model.Batch{
		Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "root/a", FireAt: 1}},
		Trace:  []byte(`{"event": "tick"}`),
	}
	for b.Loop() {
		if err := s.Commit(ctx, exe, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchLoad measures loading one execution.
func BenchLoad(b *testing.B, s Full) {
	ctx := Fresh(b, s, model.DefaultTraceMax)
	exe := &model.Execution{ID: "bench", DefinitionID: "def", Status: "running", ActivePath: "root/a"}
	if err := s.Save(ctx, exe); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if e, err := s.Load(ctx, exe.ID); err != nil || e == nil {
			b.Fatal(e, err)
		}
	}
}
