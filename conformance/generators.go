package conformance

import (
	"encoding/json"
	"fmt"

	"pgregory.net/rapid"

	"github.com/storecheck/storecheck/model"
)

// The generators draw from small pools on purpose: few ids, paths, event ids
// and fire_at values make collisions (re-delivered events, re-armed timers,
// ties, page boundaries) common, which is where stores go wrong.

// executionIDs are the ids the state machine writes. One looks like a
// timestamp, because the libSQL driver has returned such TEXT as time.Time.
// Two differ only in case: ids are compared exactly, so E1 is another
// execution than e1, and a store whose tables key executions without case
// (COLLATE NOCASE, MySQL's default collation) must show it. One extends
// another (e10 sorts right after e1): a list_executions cursor that skips
// what extends the last id listed (a keyset page from last + "\xff") must
// show it.
var executionIDs = []string{"2024-01-02 03:04:05", "e1", "e10", "E1"}

// missingID is never written.
const missingID = "e-missing"

// definitionFor fixes each execution's definition: an engine never moves an
// execution to another definition.
func definitionFor(id string) string {
	switch id {
	case "e10":
		return "def-b"
	case "2024-01-02 03:04:05":
		return "2024-06-01T00:00:00Z" // a definition id that looks like a time, too
	default:
		return "def-a"
	}
}

var (
	statuses = []string{"running", "waiting", "done", "failed"}
	// Two event ids differ only in case: ids are compared exactly, and a
	// store whose dedupe ledger ignores case (COLLATE NOCASE) must show it.
	eventIDs = []string{"ev1", "ev2", "EV1"}
	// Two timer paths differ only in case, for the same reason: A is
	// another timer than a.
	timerPaths   = []string{"a", "b", "A"}
	fireTimes    = []float64{1, 2.5, 3, 1700000000.125}
	childIDs     = []string{"c1", "c2", "c3"}
	contextNotes = []string{"", "plain", "héllo <&> \"quoted\"", "2025-01-01 00:00:00"}
)

func drawOptional[V any](t *rapid.T, g *rapid.Generator[V], label string) *V {
	if !rapid.Bool().Draw(t, label+"?") {
		return nil
	}
	v := g.Draw(t, label)
	return &v
}

func drawObject(t *rapid.T, label string) json.RawMessage {
	n := rapid.IntRange(0, 3).Draw(t, label+".n")
	note := rapid.SampledFrom(contextNotes).Draw(t, label+".note")
	return mustJSON(map[string]any{"n": n, "note": note})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("conformance: encode generated value: %v", err))
	}
	return b
}

// drawExecution returns an execution with the given id and version and random
// contents.
func drawExecution(t *rapid.T, id string, version int64) *model.Execution {
	exe := &model.Execution{
		ID:           id,
		DefinitionID: definitionFor(id),
		Version:      version,
		Status:       rapid.SampledFrom(statuses).Draw(t, "status"),
		Outcome:      drawOptional(t, rapid.SampledFrom([]string{"ok", "error"}), "outcome"),
		ActivePath:   rapid.SampledFrom([]string{"root", "root.a", "root.b.c"}).Draw(t, "active_path"),
		Context:      drawObject(t, "context"),
	}
	if rapid.IntRange(0, 3).Draw(t, "child?") == 0 {
		parent := rapid.SampledFrom(executionIDs).Draw(t, "parent_id")
		exe.ParentID = &parent
	}
	if rapid.Bool().Draw(t, "extra?") {
		exe.Extra = map[string]json.RawMessage{"history": mustJSON([]int{rapid.IntRange(0, 9).Draw(t, "history")})}
	}
	return exe
}

// drawBatch returns a random commit batch; token makes its event ids unique.
func drawBatch(t *rapid.T, ids []string) model.Batch {
	var b model.Batch
	for i := range rapid.IntRange(0, 3).Draw(t, "emits") {
		e := model.Emit{Event: model.Event{
			ID:   fmt.Sprintf("out-%d", rapid.IntRange(0, 99).Draw(t, fmt.Sprintf("emit%d.id", i))),
			Name: rapid.SampledFrom([]string{"tick", "done", "fail"}).Draw(t, fmt.Sprintf("emit%d.name", i)),
		}}
		if rapid.Bool().Draw(t, fmt.Sprintf("emit%d.data?", i)) {
			e.Event.Data = drawObject(t, fmt.Sprintf("emit%d.data", i))
		}
		e.TargetID = drawOptional(t, rapid.SampledFrom(ids), fmt.Sprintf("emit%d.target", i))
		b.Emits = append(b.Emits, e)
	}
	b.ProcessedEventID = drawOptional(t, rapid.SampledFrom(eventIDs), "processed_event_id")
	for i := range rapid.IntRange(0, 3).Draw(t, "timer_ops") {
		op := model.TimerOp{
			Action: rapid.SampledFrom([]model.TimerAction{model.TimerSchedule, model.TimerSchedule, model.TimerCancel}).Draw(t, fmt.Sprintf("timer%d.action", i)),
			Path:   rapid.SampledFrom(timerPaths).Draw(t, fmt.Sprintf("timer%d.path", i)),
		}
		if op.Action == model.TimerSchedule {
			op.FireAt = rapid.SampledFrom(fireTimes).Draw(t, fmt.Sprintf("timer%d.fire_at", i))
		}
		b.Timers = append(b.Timers, op)
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "spawns") {
		b.Spawns = append(b.Spawns, model.Spawn{
			ChildID:  rapid.SampledFrom(childIDs).Draw(t, fmt.Sprintf("spawn%d.child", i)),
			RootPath: rapid.SampledFrom([]string{"p", "q"}).Draw(t, fmt.Sprintf("spawn%d.root_path", i)),
			Context:  drawObject(t, fmt.Sprintf("spawn%d.context", i)),
		})
	}
	if rapid.Bool().Draw(t, "trace?") {
		b.Trace = drawObject(t, "trace")
	}
	return b
}

// describeBatch is a one-line summary of a batch for the step log.
func describeBatch(b model.Batch) string {
	s := fmt.Sprintf("%d emits, %d timer ops, %d spawns", len(b.Emits), len(b.Timers), len(b.Spawns))
	if b.ProcessedEventID != nil {
		s += ", dedupe " + *b.ProcessedEventID
	}
	for _, op := range b.Timers {
		if op.Action == model.TimerSchedule {
			s += fmt.Sprintf(", schedule %s@%v", op.Path, op.FireAt)
		} else {
			s += ", cancel " + op.Path
		}
	}
	if b.Trace != nil {
		s += ", trace step"
	}
	return s
}
