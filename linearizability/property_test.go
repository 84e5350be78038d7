package linearizability

import (
	"context"
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSimulatedHistoriesAreOk checks larger legal histories, with a small
// trace ring and many indeterminate writes, for a few fixed seeds.
func TestSimulatedHistoriesAreOk(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		h := simulate(t, simConfig{ops: 2000, clients: 8, execs: 4, traceMax: 5, seed: seed, indeterminate: 0.1})
		rep, err := Check(context.Background(), h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != Ok {
			t.Fatalf("seed %d: verdict %s: %v\nnotes: %v", seed, rep.Verdict, rep.Err, rep.Notes)
		}
	}
}

func drawSim(t *rapid.T) simConfig {
	return simConfig{
		ops:           rapid.IntRange(1, 400).Draw(t, "ops"),
		clients:       rapid.IntRange(1, 8).Draw(t, "clients"),
		execs:         rapid.IntRange(1, 4).Draw(t, "execs"),
		traceMax:      rapid.IntRange(0, 6).Draw(t, "traceMax"),
		seed:          rapid.Uint64().Draw(t, "seed"),
		indeterminate: rapid.Float64Range(0, 0.3).Draw(t, "indeterminate"),
	}
}

// TestPropertyLegalHistoriesAreOk: every history a correct store can produce
// (simulated against the reference model) is Ok.
func TestPropertyLegalHistoriesAreOk(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := simulate(t, drawSim(rt))
		rep, err := Check(context.Background(), h, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		if rep.Verdict != Ok {
			rt.Fatalf("verdict %s: %v", rep.Verdict, rep.Err)
		}
	})
}

// TestPropertyStaleReadIsCaught: turn one load that followed a finished
// commit of version v into a read of version v-1; the checker must say
// Illegal, naming linearizability.
func TestPropertyStaleReadIsCaught(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := drawSim(rt)
		cfg.ops = max(cfg.ops, 50)
		h := simulate(t, cfg)
		// the ok commits by (execution, version written)
		type at struct {
			exec string
			v    int64
		}
		wrote := map[at]*Operation{}
		for i := range h.Ops {
			op := &h.Ops[i]
			if op.Kind.IsCommit() && op.Output.Outcome == OutcomeOK {
				wrote[at{op.Execution, op.Input.Expected + 1}] = op
			}
		}
		var candidates []int
		for i, op := range h.Ops {
			if op.Kind != KindLoad || op.Heal || !op.Output.Exists {
				continue
			}
			cur, prev := wrote[at{op.Execution, op.Output.Version}], wrote[at{op.Execution, op.Output.Version - 1}]
			if cur != nil && prev != nil && cur.Return < op.Call {
				candidates = append(candidates, i)
			}
		}
		if len(candidates) == 0 {
			rt.Skip("no load follows two finished commits")
		}
		i := candidates[rapid.IntRange(0, len(candidates)-1).Draw(rt, "load")]
		h.Ops = slices.Clone(h.Ops)
		load := &h.Ops[i]
		prev := wrote[at{load.Execution, load.Output.Version - 1}]
		load.Output.Version, load.Output.Data = load.Output.Version-1, prev.Input.Data
		rep, err := Check(context.Background(), h, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		if rep.Verdict != Illegal || !errors.Is(rep.Err, ErrLinearizability) {
			rt.Fatalf("stale read at op %d checked %s: %v", i, rep.Verdict, rep.Err)
		}
	})
}
