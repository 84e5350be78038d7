package procfault

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/storecheck/storecheck/model/runstore"
)

// A runsOp is one mutation of a run store in a power-loss run: the worker
// draws it, reports it before the call, and the parent replays the
// acknowledged ones on the reference model (model/runstore.Reference).
// Every input, the time included, is in the op, so both sides do exactly
// the same thing.
type runsOp struct {
	Kind string `json:"kind"` // opCreate, opEvent or opCheckpoint
	Run  string `json:"run"`
	// Seq is a checkpoint's sequence number.
	Seq int64 `json:"seq,omitempty"`
	// Name is unique in the run (cycle and op number); it goes into the
	// payloads, so that a row shows which op wrote it.
	Name  string `json:"name"`
	NowMS int64  `json:"now_ms"`
}

// The run-store ops: each writes its own rows and a run event.
const (
	opCreate     = "create_run"
	opEvent      = "append_run_event"
	opCheckpoint = "append_checkpoint"
)

// runsEpoch is the clock of the ops: milliseconds from it.
var runsEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (o runsOp) String() string {
	if o.Kind == opCheckpoint {
		return fmt.Sprintf("%s %s of run %s (sequence %d)", o.Kind, o.Name, o.Run, o.Seq)
	}
	return fmt.Sprintf("%s %s on run %s", o.Kind, o.Name, o.Run)
}

// apply runs the op on s.
func (o runsOp) apply(ctx context.Context, s runstore.Store) error {
	now := runsEpoch.Add(time.Duration(o.NowMS) * time.Millisecond)
	payload := json.RawMessage(fmt.Sprintf(`{"op":%q}`, o.Name))
	switch o.Kind {
	case opCreate:
		_, err := s.CreateRun(ctx, runstore.NewRun{ID: o.Run, TenantID: "storecheck", SessionID: "s-" + o.Run,
			PlanID: "plan", RevisionID: "rev", State: payload, NextNodes: []string{"start"}, Now: now})
		return err
	case opEvent:
		_, err := s.AppendRunEvent(ctx, o.Run, "storecheck.tick", payload, now)
		return err
	case opCheckpoint:
		return s.AppendCheckpoint(ctx, runstore.Checkpoint{ID: fmt.Sprintf("cp-%s-%d", o.Run, o.Seq), RunID: o.Run,
			Sequence: o.Seq, PlanHash: "plan-hash", State: payload, NextNodes: []string{"next"}, CreatedAt: now})
	}
	return fmt.Errorf("unknown run-store op %q", o.Kind)
}

// runsGen draws a worker's ops from the seed and its cycle, over the runs
// the recovered store holds and those it creates.
type runsGen struct {
	rng   *rand.Rand
	cycle int
	runs  []string
	seq   map[string]int64 // run → its highest checkpoint sequence
}

// newRunsGen starts from the recovered tables.
func newRunsGen(seed uint64, cycle int, d *runstore.Dump) *runsGen {
	g := &runsGen{rng: rand.New(rand.NewPCG(seed, 2<<32+uint64(cycle))), cycle: cycle, seq: map[string]int64{}}
	for _, r := range d.Runs {
		g.runs = append(g.runs, r.ID)
	}
	for _, c := range d.Checkpoints {
		g.seq[c.RunID] = max(g.seq[c.RunID], c.Sequence)
	}
	return g
}

// next draws op n: a new run a quarter of the time (and whenever there is
// none), else an event or a checkpoint on a run drawn among all.
func (g *runsGen) next(n int) runsOp {
	op := runsOp{Name: fmt.Sprintf("c%d-%d", g.cycle, n), NowMS: int64(g.cycle)*100_000 + int64(n)}
	switch {
	case len(g.runs) == 0 || g.rng.IntN(4) == 0:
		op.Kind, op.Run = opCreate, "r"+op.Name
	case g.rng.IntN(2) == 0:
		op.Kind, op.Run = opEvent, g.runs[g.rng.IntN(len(g.runs))]
	default:
		op.Kind, op.Run = opCheckpoint, g.runs[g.rng.IntN(len(g.runs))]
		op.Seq = g.seq[op.Run] + 1
	}
	return op
}

// done records that op was acknowledged, for the next draws.
func (g *runsGen) done(op runsOp) {
	switch op.Kind {
	case opCreate:
		g.runs = append(g.runs, op.Run)
	case opCheckpoint:
		g.seq[op.Run] = op.Seq
	}
}
