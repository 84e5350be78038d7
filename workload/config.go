package workload

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// Limits and defaults of a run.
const (
	DefaultClients    = 4
	DefaultExecutions = 4
	DefaultOps        = 1000
	// MaxOps and MaxDuration bound every run, whichever bound it was given.
	MaxOps      = 1_000_000
	MaxDuration = time.Hour
	// DefaultOpTimeout bounds each store call.
	DefaultOpTimeout = 10 * time.Second
)

// Config describes one run. Zero fields take their defaults.
type Config struct {
	// Clients is how many clients run at once.
	Clients int
	// RecoveryBound is how long the heal reads (of the primary, then of
	// the replicas) may keep failing before the store counts as not
	// recovered; 0 means linearizability.RecoveryBound.
	RecoveryBound time.Duration
	// FirstClient numbers the clients from FirstClient on. A client's number
	// is in its witness tokens ("c<i>-<n>"), its timer fire_at values and its
	// random stream, so runs in several processes against one store (see
	// Drive) give each a distinct range. 0 for a run in one process.
	FirstClient int
	// Executions is how many executions the clients share: the contention
	// knob.
	Executions int
	// Ops is how many workload steps the clients start, all together (a
	// relay or sweep step is one step of several store calls; an event
	// delivery is two). The run stops at Ops or Duration, whichever comes
	// first; with neither set it runs DefaultOps steps.
	Ops int
	// Duration bounds the traffic phase in wall-clock time.
	Duration time.Duration
	// Seed drives every random choice.
	Seed uint64
	// Mix weighs the steps; the zero Mix means DefaultMix().
	Mix Mix
	// TraceMax is the trace cap the store was opened with: 0 means
	// model.DefaultTraceMax, a negative value an unbounded ring. A store
	// that implements model.TraceMaxSetter is set to it, so the two agree.
	TraceMax int
	// OpTimeout bounds each store call; a call that runs out of time is
	// recorded as indeterminate. 0 means DefaultOpTimeout.
	OpTimeout time.Duration
	// StallBound stops the traffic when no store call of any client has
	// returned within its timeout for this long (Result.Stalled, wrapping
	// ErrStalled); the run then heals and checks what it recorded. 0 means
	// DefaultStallBound or 6 × OpTimeout, whichever is longer.
	StallBound time.Duration
	// CheckTimeout bounds the linearizability check; 0 means
	// linearizability.DefaultTimeout. A check that runs out of time gives
	// the verdict Unknown.
	CheckTimeout time.Duration
	// OutDir, when set, is the run's evidence.Folder: it receives the
	// history, porcupine's visualization and the violations of a run that
	// is not Ok. It is created if missing.
	OutDir string
	// Progress, when set, is incremented after every step, for a live
	// progress display.
	Progress *atomic.Int64
	// During, when set, runs alongside the traffic phase (fault injection):
	// it starts with the clients; its context ends when they stop; Run waits
	// for it to return, having undone whatever it broke, before the heal
	// reads. now reads the history's clock (Recorder.Now), so that what it
	// records lines up with call_ns and return_ns. Its error ends the run
	// as a harness error. Run only; Drive ignores it.
	During func(ctx context.Context, now func() int64) error
	// Observe, when set, runs alongside the traffic as During does, given
	// the run's executions, and records reads of its own through clients it
	// makes with newClient: a
	// client reads from store (one part of the system under test, e.g. one
	// node at a level served locally) and is named name in the history. Its
	// reads are replica reads (Operation.Replica), held to the replica
	// rules — a version that was committed, never less than the same
	// name's earlier reads — instead of porcupine. Its error ends the run as
	// a harness error. Run only.
	Observe func(ctx context.Context, execs []string, newClient func(store model.Store, name string) *linearizability.Client) error
	// OnAck, when set, is called on the committing client's goroutine each
	// time a commit or save returns without error (an acknowledged write):
	// a fault that must land right after an acknowledgement listens to it.
	// It must not block.
	OnAck func()
	// Gate, when set, is waited on before each step of every client: a
	// fault closes it to hold the traffic for a moment (kill-during-install
	// holds the writes while an interrupted install is retried, so that the
	// leader compacts nothing meanwhile).
	Gate *Gate
	// Replicas, when set, gives client i a replica of its own to read from,
	// Replicas[i % len(Replicas)], while the store Run is given is the
	// primary: its reads are held to the replica rules instead of
	// linearizability, and after the heal every replica must show the
	// primary's final rows (package linearizability, Replica reads).
	Replicas []linearizability.Replica
	// KeepArtifacts writes the artifacts for every verdict, Ok included, so
	// that reports can plot a passing run's latency too.
	KeepArtifacts bool
	// Scenario and Store are written into the history's meta, to say where
	// it came from.
	Scenario, Store string
}

// Mix weighs the kinds of step a client picks; a weight of 0 disables one.
type Mix struct {
	Commit       int // commit from the last version seen (loading first when unsure)
	StaleCommit  int // commit from an older version seen: meant to conflict
	Save         int // save from the last version seen
	Deliver      int // load_for_event, then commit with the event unless processed
	Load         int
	LoadForEvent int // a probe only, aimed at a commit in flight
	IsProcessed  int
	ReadTrace    int
	AppendTrace  int
	Relay        int // pending_outbox, then ack a few
	SpawnRelay   int // pending_spawns, then ack a few
	Sweep        int // due_timers, then delete a few, sometimes a stale fire_at
}

// DefaultMix is a write-heavy mix that exercises every operation.
func DefaultMix() Mix {
	return Mix{
		Commit: 25, StaleCommit: 5, Save: 4, Deliver: 10, Load: 15, LoadForEvent: 16,
		IsProcessed: 4, ReadTrace: 10, AppendTrace: 6, Relay: 8, SpawnRelay: 4, Sweep: 5,
	}
}

// weights lists the mix in a fixed order, paired with its steps.
func (m Mix) weights() []int {
	return []int{m.Commit, m.StaleCommit, m.Save, m.Deliver, m.Load, m.LoadForEvent,
		m.IsProcessed, m.ReadTrace, m.AppendTrace, m.Relay, m.SpawnRelay, m.Sweep}
}

// Validate says what in c Run would refuse, before any store is opened:
// a caller that takes the knobs from a user (storecheck's flags) refuses
// them as bad usage rather than running nothing.
func (c Config) Validate() error {
	_, err := c.normalize()
	return err
}

// normalize fills defaults and rejects impossible values.
func (c Config) normalize() (Config, error) {
	if c.Clients == 0 {
		c.Clients = DefaultClients
	}
	if c.Executions == 0 {
		c.Executions = DefaultExecutions
	}
	if c.Ops == 0 && c.Duration == 0 {
		c.Ops = DefaultOps
	}
	if c.Ops == 0 {
		c.Ops = MaxOps
	}
	if c.Duration == 0 {
		c.Duration = MaxDuration
	}
	if c.Mix == (Mix{}) {
		c.Mix = DefaultMix()
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = DefaultOpTimeout
	}
	if c.StallBound == 0 {
		c.StallBound = max(DefaultStallBound, 6*c.OpTimeout)
	}
	if c.TraceMax == 0 {
		c.TraceMax = model.DefaultTraceMax
	}
	switch {
	case c.Clients < 1 || c.Clients > 1000:
		return c, fmt.Errorf("workload: clients must be 1..1000, got %d", c.Clients)
	case c.FirstClient < 0 || c.FirstClient+c.Clients > 1000:
		return c, fmt.Errorf("workload: first client must be 0..%d, got %d", 1000-c.Clients, c.FirstClient)
	case c.Executions < 1 || c.Executions > 100_000:
		return c, fmt.Errorf("workload: executions must be 1..100000, got %d", c.Executions)
	case c.Ops < 0 || c.Ops > MaxOps:
		return c, fmt.Errorf("workload: ops must be 0..%d, got %d", MaxOps, c.Ops)
	case c.Duration < 0 || c.Duration > MaxDuration:
		return c, fmt.Errorf("workload: duration must be 0..%v, got %v", MaxDuration, c.Duration)
	case c.OpTimeout < 0 || c.CheckTimeout < 0:
		return c, fmt.Errorf("workload: timeouts must not be negative")
	case c.StallBound <= c.OpTimeout:
		return c, fmt.Errorf("workload: the stall bound (%v) must be longer than the call timeout (%v)", c.StallBound, c.OpTimeout)
	}
	total := 0
	for _, w := range c.Mix.weights() {
		if w < 0 {
			return c, fmt.Errorf("workload: mix weights must not be negative: %+v", c.Mix)
		}
		total += w
	}
	if total == 0 {
		return c, fmt.Errorf("workload: the mix has no positive weight")
	}
	return c, nil
}

// storeTraceMax is the cap in model.Config's terms (0: unbounded).
func (c Config) storeTraceMax() int { return max(c.TraceMax, 0) }

// meta is what the history records about the run.
func (c Config) meta() linearizability.Meta {
	scenario := c.Scenario
	if scenario == "" {
		scenario = "concurrent"
	}
	return linearizability.Meta{TraceMax: c.storeTraceMax(), Seed: c.Seed, Scenario: scenario, Store: c.Store}
}

// executionIDs names the executions of a run: e0, e1, …, except that with
// two or more the last is E0, the first's id in upper case. Ids are compared
// exactly, so E0 is an execution of its own; a store that keys executions
// without case (COLLATE NOCASE) makes the two one row, which the histories
// show.
func (c Config) executionIDs() []string {
	ids := make([]string, c.Executions)
	for i := range ids {
		ids[i] = fmt.Sprintf("e%d", i)
	}
	if n := len(ids); n >= 2 {
		ids[n-1] = strings.ToUpper(ids[0])
	}
	return ids
}
