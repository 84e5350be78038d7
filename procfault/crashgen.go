package procfault

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// crashExecutions is how many executions a crash-mode worker commits to.
const crashExecutions = 4

// crashGen draws the commits of a crash-mode worker. The worker is the only
// writer, so every commit is from the version it last saw, and every value a
// commit writes derives from its token "k<cycle>-<n>", unique in the run:
// emit ids "<token>/e<k>", spawn child ids "<token>/s0", the processed event
// id "<token>/p", timer fire_at values, the trace entry's token. The
// recovery checks find each commit's side-writes by these witnesses, as the
// global checks of package linearizability do.
type crashGen struct {
	rng   *rand.Rand
	cycle int
	state map[string]crashView
}

// crashView is what is stored for one execution.
type crashView struct {
	version int64
	token   string
}

// newCrashGen starts from the tables the worker recovered.
func newCrashGen(seed uint64, cycle int, d *model.Dump) (*crashGen, error) {
	g := &crashGen{rng: rand.New(rand.NewPCG(seed, uint64(cycle))), cycle: cycle, state: map[string]crashView{}}
	for _, r := range d.Executions {
		var exe model.Execution
		if err := json.Unmarshal([]byte(r.Data), &exe); err != nil {
			return nil, fmt.Errorf("recovered execution %q: %w", r.ID, err)
		}
		g.state[r.ID] = crashView{version: r.Version, token: witnessToken(&exe)}
	}
	return g, nil
}

// next draws commit n of the cycle.
func (g *crashGen) next(n int) (*model.Execution, model.Batch) {
	id := fmt.Sprintf("e%d", g.rng.IntN(crashExecutions))
	from := g.state[id]
	token := fmt.Sprintf("k%d-%d", g.cycle, n)
	exe := &model.Execution{
		ID: id, DefinitionID: "storecheck", Version: from.version,
		Status:     []string{"running", "running", "waiting", "done"}[g.rng.IntN(4)],
		ActivePath: fmt.Sprintf("root/s%d", g.rng.IntN(4)),
		Context:    json.RawMessage(fmt.Sprintf(`{"n":%d}`, from.version+1)),
		Extra: map[string]json.RawMessage{
			linearizability.TokenField: jsonString(token),
			linearizability.PrevField:  jsonString(from.token),
		},
	}
	return exe, g.batch(token, n)
}

// batch draws a commit's side-writes: always at least one emit, so that a
// commit that left only part of itself always shows.
func (g *crashGen) batch(token string, n int) model.Batch {
	var b model.Batch
	for k := range 1 + g.rng.IntN(2) {
		e := model.Emit{Event: model.Event{ID: fmt.Sprintf("%s/e%d", token, k), Name: "tick", Data: json.RawMessage(fmt.Sprintf(`{"k":%d}`, k))}}
		if g.rng.IntN(2) == 0 {
			e.TargetID = model.Ptr(fmt.Sprintf("e%d", g.rng.IntN(crashExecutions)))
		}
		b.Emits = append(b.Emits, e)
	}
	if g.rng.IntN(2) == 0 {
		b.ProcessedEventID = model.Ptr(token + "/p")
	}
	for k := range g.rng.IntN(3) {
		op := model.TimerOp{Action: model.TimerSchedule, Path: fmt.Sprintf("t%d", g.rng.IntN(2)), FireAt: g.fireAt(n, k)}
		if g.rng.IntN(10) < 3 {
			op = model.TimerOp{Action: model.TimerCancel, Path: op.Path}
		}
		b.Timers = append(b.Timers, op)
	}
	if g.rng.IntN(3) == 0 {
		b.Spawns = []model.Spawn{{ChildID: token + "/s0", RootPath: "child", Context: json.RawMessage(fmt.Sprintf(`{"parent_token":%q}`, token))}}
	}
	if g.rng.IntN(2) == 0 {
		b.Trace = json.RawMessage(fmt.Sprintf(`{"kind":"commit","token":%q}`, token))
	}
	return b
}

// fireAt is a fire_at unique to timer k of commit n of the cycle.
func (g *crashGen) fireAt(n, k int) float64 {
	return float64(int64(g.cycle+1)*1_000_000 + int64(n)*10 + int64(k))
}

// committed records that exe (its version already advanced) is stored.
func (g *crashGen) committed(exe *model.Execution) {
	g.state[exe.ID] = crashView{version: exe.Version, token: witnessToken(exe)}
}

func jsonString(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}
