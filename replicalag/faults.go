package replicalag

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/reports"
)

// The faults of the fault phase.
const (
	FaultStall = "stall-replica" // a replica stops syncing for a window
	FaultCut   = "cut-replica"   // a client loses its link to the primary
	FaultKill  = "kill-primary"  // the primary is killed, then restarted
)

// faultStep is one fault of the plan: what, on which replica, when after
// the phase starts, for how long.
type faultStep struct {
	Fault  string        `json:"fault"`
	Target string        `json:"target,omitempty"`
	At     time.Duration `json:"at_ns"`
	For    time.Duration `json:"for_ns"`
}

// faultTail is how long the traffic goes on after the last fault healed.
const faultTail = 300 * time.Millisecond

// faultPlan draws the fault phase's plan from the seed: a stalled replica,
// a cut client and a killed primary, overlapping a little, each with a
// seeded start and length.
func faultPlan(seed uint64, replicas []string) []faultStep {
	rng := rand.New(rand.NewPCG(seed, stream(0, 0, useFaults)))
	ms := func(lo, spread int) time.Duration { return time.Duration(lo+rng.IntN(spread)) * time.Millisecond }
	stalled := replicas[rng.IntN(len(replicas))]
	cut := replicas[rng.IntN(len(replicas))]
	return []faultStep{
		{Fault: FaultStall, Target: stalled, At: ms(100, 100), For: ms(400, 200)},
		{Fault: FaultCut, Target: cut, At: ms(300, 100), For: ms(400, 200)},
		{Fault: FaultKill, Target: "primary", At: ms(1000, 100), For: ms(250, 100)},
	}
}

// planEnd is when the last fault of plan has healed.
func planEnd(plan []faultStep) time.Duration {
	var end time.Duration
	for _, s := range plan {
		end = max(end, s.At+s.For)
	}
	return end
}

// injector runs a fault plan against a cluster and logs each fault on the
// recorder's clock.
type injector struct {
	cluster  Cluster
	replicas map[string]*replica.Store
	now      func() int64

	mu    sync.Mutex
	log   []reports.Fault
	notes []string
}

// run injects every step of plan at its time after start, heals it after
// its window, and returns when all are healed or ctx ends; whatever is
// injected is healed before it returns, whatever happens.
func (in *injector) run(ctx context.Context, start time.Time, plan []faultStep) {
	var wg sync.WaitGroup
	for _, step := range plan {
		wg.Go(func() { in.one(ctx, start, step) })
	}
	wg.Wait()
}

// one runs one step.
func (in *injector) one(ctx context.Context, start time.Time, s faultStep) {
	if !sleep(ctx, time.Until(start.Add(s.At))) {
		return
	}
	inject, heal, err := in.actions(s)
	if err != nil {
		in.note("%s: %v", s.Fault, err)
		return
	}
	f := reports.Fault{Fault: s.Fault, Target: s.Target, StartNS: in.now()}
	if err := inject(ctx); err != nil {
		in.note("%s %s could not be injected: %v", s.Fault, s.Target, err)
		return
	}
	sleep(ctx, s.For)
	// The heal runs even when ctx has ended: nothing injected may outlive
	// the phase.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := heal(hctx); err != nil {
		f.Detail = "heal failed: " + err.Error()
		in.note("%s %s could not be healed: %v", s.Fault, s.Target, err)
	} else {
		f.EndNS = in.now()
	}
	in.mu.Lock()
	in.log = append(in.log, f)
	in.mu.Unlock()
}

// actions returns the inject and heal functions of a step.
func (in *injector) actions(s faultStep) (inject, heal func(context.Context) error, err error) {
	if s.Fault == FaultStall {
		r := in.replicas[s.Target]
		if r == nil {
			return nil, nil, fmt.Errorf("no replica %q", s.Target)
		}
		return func(context.Context) error { r.StallSyncs(); return nil },
			func(context.Context) error { r.ResumeSyncs(); return nil }, nil
	}
	f, ok := in.cluster.(Faulter)
	if !ok {
		return nil, nil, fmt.Errorf("this cluster cannot inject it")
	}
	switch s.Fault {
	case FaultCut:
		return func(ctx context.Context) error { return f.CutReplica(ctx, s.Target) },
			func(ctx context.Context) error { return f.HealReplica(ctx, s.Target) }, nil
	case FaultKill:
		return f.KillPrimary, f.RestartPrimary, nil
	}
	return nil, nil, fmt.Errorf("unknown fault")
}

func (in *injector) note(format string, a ...any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.notes = append(in.notes, fmt.Sprintf(format, a...))
}

// writeLog writes the faults as reports.FaultsFile lines in dir.
func writeLog(dir string, faults []reports.Fault) error {
	f, err := os.Create(filepath.Join(dir, reports.FaultsFile))
	if err != nil {
		return fmt.Errorf("fault log: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, ft := range faults {
		if err := enc.Encode(ft); err != nil {
			f.Close()
			return fmt.Errorf("fault log: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("fault log: %w", err)
	}
	return nil
}
