package workload

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// Witnesses. Every write attempt of client i gets the token "c<i>-<n>", n
// counting that client's attempts, and everything the attempt writes derives
// from it:
//
//   - the execution carries "token" and "prev" (the token the client
//     believes is stored at the version it commits from) as top-level fields;
//   - emit event ids are "<token>/e<k>", spawn child ids "<token>/s<k>", a
//     fresh processed event id "<token>/p";
//   - a scheduled timer's fire_at is (i+1)·10⁹ + 10·n + k, unique in the run;
//   - a trace entry (a commit's step or a standalone append) carries the
//     token.
//
// Only deliberate re-deliveries reuse a processed event id.

// timerPath draws one of the two timer paths of every execution: few, so
// that schedules and cancels of different commits meet. They differ only in
// case: paths are compared exactly, and a store whose timers ignore case
// (COLLATE NOCASE) re-arms or cancels t0 when a commit names T0.
func timerPath(rng *rand.Rand) string {
	if rng.IntN(2) == 0 {
		return "t0"
	}
	return "T0"
}

// status draws the status an execution is written with.
func status(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return "waiting"
	case 1:
		return "done"
	}
	return "running"
}

// view is what a client believes is stored for an execution.
type view struct {
	version int64
	token   string
}

// fireAt is a unique fire_at for timer k of attempt n of client i.
func fireAt(client, n, k int) float64 {
	return float64(int64(client+1)*1_000_000_000 + int64(n)*10 + int64(k))
}

// maxFireAt bounds every fire_at of a run of c clients.
func maxFireAt(clients int) float64 { return float64(int64(clients+1) * 1_000_000_000) }

// newExecution is the execution an attempt writes, from what it believes is
// stored.
func newExecution(id, token string, from view, rng *rand.Rand) *model.Execution {
	return &model.Execution{
		ID: id, DefinitionID: "storecheck", Version: from.version,
		Status: status(rng), ActivePath: fmt.Sprintf("root/s%d", rng.IntN(4)),
		Context: json.RawMessage(fmt.Sprintf(`{"n":%d}`, from.version+1)),
		Extra: map[string]json.RawMessage{
			linearizability.TokenField: jsonString(token),
			linearizability.PrevField:  jsonString(from.token),
		},
	}
}

// newBatch draws a commit's side-writes for attempt n of client i.
func newBatch(client, n int, token string, execs []string, rng *rand.Rand) model.Batch {
	var b model.Batch
	for k := range []int{0, 0, 1, 1, 2}[rng.IntN(5)] {
		e := model.Emit{Event: model.Event{ID: fmt.Sprintf("%s/e%d", token, k), Name: "tick", Data: json.RawMessage(fmt.Sprintf(`{"k":%d}`, k))}}
		if rng.IntN(2) == 0 {
			e.TargetID = model.Ptr(execs[rng.IntN(len(execs))])
		}
		b.Emits = append(b.Emits, e)
	}
	if rng.IntN(2) == 0 {
		b.ProcessedEventID = model.Ptr(token + "/p")
	}
	for k := range rng.IntN(3) {
		op := model.TimerOp{Action: model.TimerSchedule, Path: timerPath(rng), FireAt: fireAt(client, n, k)}
		if rng.IntN(10) < 3 {
			op = model.TimerOp{Action: model.TimerCancel, Path: op.Path}
		}
		b.Timers = append(b.Timers, op)
	}
	if rng.IntN(4) == 0 {
		b.Spawns = []model.Spawn{{ChildID: token + "/s0", RootPath: "child", Context: json.RawMessage(fmt.Sprintf(`{"parent_token":%q}`, token))}}
	}
	if rng.IntN(2) == 0 {
		b.Trace = traceEntry(token, "commit")
	}
	return b
}

// traceEntry is a trace step carrying a token, its keys in canonical
// order, so that the recorder identifies each entry of a trace read
// without re-encoding it (linearizability.ObjectID).
func traceEntry(token, kind string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"kind":%q,"token":%q}`, kind, token))
}

// tokenOf reads the token of a loaded execution; "" when it has none.
func tokenOf(exe *model.Execution) string {
	var tok string
	if raw, ok := exe.Extra[linearizability.TokenField]; ok {
		_ = json.Unmarshal(raw, &tok)
	}
	return tok
}

func jsonString(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}
