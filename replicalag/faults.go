package replicalag

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/evidence"
)

// The faults of the fault phase.
const (
	FaultStall = string(replica.Stall) // a replica stops syncing for a window
	FaultCut   = string(replica.Cut)   // a client loses its link to the primary
	FaultKill  = string(replica.Kill)  // the primary is killed, then restarted
	FaultPause = string(replica.Pause) // the primary is frozen (SIGSTOP), then thawed
	// FaultCrashReplica kills a replica client's process while it syncs
	// and reopens its file here.
	FaultCrashReplica = string(replica.CrashClient)
)

// crashedReplica names the replica client of the crash-replica fault: it
// runs beside the traffic's clients, in a process of its own.
const crashedReplica = "rx"

// faultsOf lists the faults a replica set's clusters take, in plan order:
// its controls are the fault names.
func faultsOf(t *Target) []string {
	out := make([]string, len(t.Controls))
	for i, c := range t.Controls {
		out[i] = string(c)
	}
	return out
}

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

// faultPlan draws the fault phase's plan from the seed, for the faults
// the cluster can take (Faults): a stalled replica, a cut client, a
// replica client killed mid-sync and reopened, a frozen primary and a
// killed one, overlapping a little, each with a seeded start and length.
// Every draw is made whichever faults are planned, so that one seed gives
// the same times on every backend.
func faultPlan(seed uint64, replicas, faults []string) []faultStep {
	rng := rand.New(rand.NewPCG(seed, stream(0, 0, useFaults)))
	ms := func(lo, spread int) time.Duration { return time.Duration(lo+rng.IntN(spread)) * time.Millisecond }
	all := []faultStep{
		{Fault: FaultStall, Target: replicas[rng.IntN(len(replicas))], At: ms(100, 100), For: ms(400, 200)},
		{Fault: FaultCut, Target: replicas[rng.IntN(len(replicas))], At: ms(300, 100), For: ms(400, 200)},
		{Fault: FaultCrashReplica, Target: crashedReplica, At: ms(500, 200), For: ms(50, 100)},
		{Fault: FaultPause, Target: "primary", At: ms(1000, 100), For: ms(300, 200)},
		{Fault: FaultKill, Target: "primary", At: ms(1700, 100), For: ms(250, 100)},
	}
	var plan []faultStep
	for _, s := range all {
		if slices.Contains(faults, s.Fault) {
			plan = append(plan, s)
		}
	}
	return plan
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
	seed     uint64

	mu       sync.Mutex
	log      []evidence.Fault
	notes    []string
	reopened []*replica.Store // replicas reopened after their process was killed
	broken   []string         // what the reopened replicas showed wrong
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
	f := evidence.Fault{Fault: s.Fault, Target: s.Target, StartNS: in.now()}
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
	if s.Fault == FaultPause {
		p, ok := in.cluster.(PrimaryPauser)
		if !ok {
			return nil, nil, fmt.Errorf("this cluster cannot pause its primary")
		}
		return p.PausePrimary, p.ResumePrimary, nil
	}
	if s.Fault == FaultCrashReplica {
		c, ok := in.cluster.(ReplicaCrasher)
		if !ok {
			return nil, nil, fmt.Errorf("this cluster cannot run replicas in processes")
		}
		delay := time.Duration(rand.New(rand.NewPCG(in.seed, stream(0, 1, useFaults))).IntN(3000)) * time.Microsecond
		return func(ctx context.Context) error { _, err := c.KillReplicaProcess(ctx, s.Target, delay); return err },
			func(ctx context.Context) error { return in.reopen(ctx, c, s.Target) }, nil
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

// reopen opens the killed replica process's file here and checks what it
// holds: an intact file (SQLite's integrity check), and, unless the
// primary restarted meanwhile, a position no lower than the one the dead
// process reported (a replica never goes back).
func (in *injector) reopen(ctx context.Context, c ReplicaCrasher, name string) error {
	r, err := c.ReopenReplica(ctx, name, stream(0, 2, useFaults))
	if err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.reopened = append(in.reopened, r.Store)
	if r.Integrity != "ok" {
		in.broken = append(in.broken, fmt.Sprintf("replica integrity: replica %s's file after its process was killed mid-sync: integrity check says %q", name, r.Integrity))
	}
	if r.Comparable && r.Resumed < r.Killed {
		in.broken = append(in.broken, fmt.Sprintf("replica monotonic: replica %s's process reported position %d before it was killed; reopened, the replica is at %d", name, r.Killed, r.Resumed))
	}
	if !r.Comparable {
		in.notes = append(in.notes, fmt.Sprintf("replica %s: the primary restarted while its process was down, so its positions before and after are not comparable", name))
	}
	return nil
}

func (in *injector) note(format string, a ...any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.notes = append(in.notes, fmt.Sprintf(format, a...))
}
