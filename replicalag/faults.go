package replicalag

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/chaos"
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

// faultSteps is plan as fault values on the level's replicas.
func faultSteps(plan []faultStep, on *chaos.Replicas, seed uint64) chaos.Plan {
	delay := time.Duration(rand.New(rand.NewPCG(seed, stream(0, 1, useFaults))).IntN(3000)) * time.Microsecond
	var steps []chaos.Step
	for _, s := range plan {
		var f chaos.Fault
		switch s.Fault {
		case FaultStall:
			f = chaos.StallReplica{Replica: s.Target}
		case FaultCut:
			f = chaos.CutReplica{Replica: s.Target}
		case FaultCrashReplica:
			f = chaos.CrashReplicaClient{Replica: s.Target, Delay: delay, Stream: stream(0, 2, useFaults)}
		case FaultPause:
			f = chaos.PausePrimary{}
		case FaultKill:
			f = chaos.KillPrimary{}
		}
		steps = append(steps, chaos.Step{Fault: f, On: on, At: s.At, For: s.For})
	}
	return chaos.Plan{Steps: steps, Seed: seed}
}

// reopened collects the replicas reopened after their process was killed,
// and what their files showed wrong: a file that fails SQLite's integrity
// check, or, unless the primary restarted meanwhile, a position lower than
// the one the dead process reported (a replica never goes back).
type reopened struct {
	mu     sync.Mutex
	stores []*replica.Store
	broken []string
}

func (r *reopened) add(re *replica.Reopened) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stores = append(r.stores, re.Store)
	name := re.Replica
	if re.Integrity != "ok" {
		r.broken = append(r.broken, fmt.Sprintf("replica integrity: replica %s's file after its process was killed mid-sync: integrity check says %q", name, re.Integrity))
	}
	if re.Comparable && re.Resumed < re.Killed {
		r.broken = append(r.broken, fmt.Sprintf("replica monotonic: replica %s's process reported position %d before it was killed; reopened, the replica is at %d", name, re.Killed, re.Resumed))
	}
}
