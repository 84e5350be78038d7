package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/evidence"
)

// fakeCluster keeps the state faults change, to check that every fault is
// undone.
type fakeCluster struct {
	mu       sync.Mutex
	nodes    []string
	leader   string
	down     map[string]bool
	paused   map[string]bool
	isolated map[string]bool
	failHeal int // Start/Resume/Rejoin fail this many times
	noIso    error
}

func newFake() *fakeCluster {
	return &fakeCluster{nodes: []string{"n1", "n2", "n3"}, leader: "n1",
		down: map[string]bool{}, paused: map[string]bool{}, isolated: map[string]bool{}}
}

func (f *fakeCluster) Kind() string      { return "fake" }
func (f *fakeCluster) NodeIDs() []string { return f.nodes }
func (f *fakeCluster) Leader(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader, nil
}

// WaitLeader elects the first healthy node other than except.
func (f *fakeCluster) WaitLeader(_ context.Context, except string, _ time.Duration) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.nodes {
		if n != except && !f.down[n] && !f.paused[n] && !f.isolated[n] {
			f.leader = n
			return n, nil
		}
	}
	return "", errors.New("no quorum")
}
func (f *fakeCluster) WaitHealthy(context.Context, time.Duration) error { return nil }
func (f *fakeCluster) set(m map[string]bool, id string, v bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m[id] = v
	return nil
}
func (f *fakeCluster) heal(m map[string]bool, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failHeal > 0 {
		f.failHeal--
		return errors.New("heal failed (test)")
	}
	m[id] = false
	return nil
}
func (f *fakeCluster) Kill(_ context.Context, id string) error   { return f.set(f.down, id, true) }
func (f *fakeCluster) Stop(_ context.Context, id string) error   { return f.set(f.down, id, true) }
func (f *fakeCluster) Start(_ context.Context, id string) error  { return f.heal(f.down, id) }
func (f *fakeCluster) Pause(_ context.Context, id string) error  { return f.set(f.paused, id, true) }
func (f *fakeCluster) Resume(_ context.Context, id string) error { return f.heal(f.paused, id) }
func (f *fakeCluster) Isolate(_ context.Context, id string) error {
	return f.set(f.isolated, id, true)
}
func (f *fakeCluster) Rejoin(_ context.Context, id string) error { return f.heal(f.isolated, id) }
func (f *fakeCluster) IsolationAvailable() error                 { return f.noIso }
func (f *fakeCluster) StepDown(ctx context.Context) error {
	f.mu.Lock()
	old := f.leader
	f.mu.Unlock()
	_, err := f.WaitLeader(ctx, old, 0)
	return err
}

// broken lists what is still broken.
func (f *fakeCluster) broken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for what, m := range map[string]map[string]bool{"down": f.down, "paused": f.paused, "isolated": f.isolated} {
		for id, v := range m {
			if v {
				out = append(out, what+" "+id)
			}
		}
	}
	return out
}

func clock() func() int64 {
	start := time.Now()
	return func() int64 { return time.Since(start).Nanoseconds() }
}

// TestScheduleHealsEverything: every fault of a schedule is injected,
// healed at the end of its window, and written to faults.jsonl in the
// format the reports read, with start before end.
func TestScheduleHealsEverything(t *testing.T) {
	c := newFake()
	folder := evidence.At(t.TempDir())
	tl, err := folder.Timeline()
	if err != nil {
		t.Fatal(err)
	}
	s := Schedule{Faults: All(), InOrder: true, Interval: 5 * time.Millisecond, Duration: 10 * time.Millisecond, Jitter: 0.5, Seed: 1, Max: 10}
	if err := s.Available(c); err != nil {
		t.Fatal(err)
	}
	var injected []string
	err = s.Run(context.Background(), c, clock(), tl, Hooks{Injected: func(name, target string) { injected = append(injected, name) }})
	if err != nil {
		t.Fatal(err)
	}
	if b := c.broken(); len(b) > 0 {
		t.Errorf("left broken: %v", b)
	}
	if len(injected) != 10 || injected[0] != "kill-leader" || injected[1] != "kill-follower" || injected[5] != "step-down" || injected[6] != "stall-leader" {
		t.Errorf("injected %v", injected)
	}
	faults, err := folder.ReadFaults()
	if err != nil || len(faults) != 10 {
		t.Fatalf("faults.jsonl: %d faults, %v", len(faults), err)
	}
	for _, f := range faults {
		if !f.Healed() || f.Target == "" {
			t.Errorf("fault %+v not healed or without target", f)
		}
	}
	if ev := tl.Faults()[0]; ev.Metrics["new_leader_ms"] < 0 || ev.Detail == "" {
		t.Errorf("kill-leader event %+v", ev)
	}
}

// TestStallLeaderRoutesBeforeTheThaw: the frozen leader is handed to
// OnResume while it is still frozen, and thawed after.
func TestStallLeaderRoutesBeforeTheThaw(t *testing.T) {
	c := newFake()
	var frozenAtRoute bool
	var routed string
	f := StallLeader{OnResume: func(id string) {
		routed = id
		c.mu.Lock()
		frozenAtRoute = c.paused[id]
		c.mu.Unlock()
	}}
	inj, err := f.Inject(context.Background(), c, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if inj.Target != "n1" || c.leader == "n1" || inj.Metrics["new_leader_ms"] < 0 {
		t.Errorf("injection %+v, leader now %s", inj, c.leader)
	}
	if err := inj.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	if routed != "n1" || !frozenAtRoute {
		t.Errorf("OnResume got %q (frozen then: %v), want n1 while frozen", routed, frozenAtRoute)
	}
	if b := c.broken(); len(b) > 0 {
		t.Errorf("left broken: %v", b)
	}
}

// TestCancelHealsAtOnce: ending the schedule's context while a fault holds
// heals it before Run returns; a heal that fails is tried again at the end.
func TestCancelHealsAtOnce(t *testing.T) {
	c := newFake()
	c.failHeal = 1
	tl, _ := evidence.Folder{}.Timeline()
	ctx, cancel := context.WithCancel(context.Background())
	s := Schedule{Faults: []Fault{StallFollower}, Interval: time.Millisecond, Duration: time.Hour, Seed: 2}
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, c, clock(), tl, Hooks{Injected: func(string, string) { cancel() }})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the failed heal was not reported")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if b := c.broken(); len(b) > 0 {
		t.Errorf("left broken: %v", b)
	}
	if evs := tl.Faults(); len(evs) != 1 || evs[0].EndNS < evs[0].StartNS || evs[0].Error == "" || evs[0].NotInjected {
		t.Errorf("events %+v; want one injected fault whose heal failed", evs)
	}
}

// A fault whose injection fails is marked as not injected in the
// timeline, so that a run can tell it went on without it.
func TestScheduleMarksFailedInjections(t *testing.T) {
	c := newFake()
	c.nodes = []string{"n1"} // no follower to pick
	tl, _ := evidence.Folder{}.Timeline()
	s := Schedule{Faults: []Fault{KillFollower}, Interval: time.Millisecond, Duration: time.Millisecond, Seed: 1, Max: 2}
	if err := s.Run(context.Background(), c, clock(), tl, Hooks{}); err == nil {
		t.Error("the failed injections were not reported")
	}
	evs := tl.Faults()
	if len(evs) != 2 {
		t.Fatalf("events %+v, want 2", evs)
	}
	for _, ev := range evs {
		if !ev.NotInjected || ev.Error == "" {
			t.Errorf("event %+v: want not injected, with the error", ev)
		}
	}
}

// TestAvailability: isolation faults say why they cannot run.
func TestAvailability(t *testing.T) {
	c := newFake()
	c.noIso = errors.New("no iptables")
	if err := IsolateLeader.Available(c); err == nil {
		t.Error("isolate-leader available without isolation")
	}
	c.nodes = []string{"n1"}
	if err := KillLeader.Available(c); err == nil {
		t.Error("kill-leader available on one node")
	}
}

// TestJitterIsSeeded: the same seed gives the same waits.
func TestJitterIsSeeded(t *testing.T) {
	s := Schedule{Jitter: 0.3}
	a, b := rand.New(rand.NewPCG(9, 1)), rand.New(rand.NewPCG(9, 1))
	for range 5 {
		x, y := s.jittered(a, time.Second), s.jittered(b, time.Second)
		if x != y || x < 700*time.Millisecond || x > 1300*time.Millisecond {
			t.Fatalf("jittered %v and %v", x, y)
		}
	}
}

// signals records what a process fault sent.
type signals struct{ got []syscall.Signal }

func (s *signals) Signal(sig syscall.Signal) error { s.got = append(s.got, sig); return nil }
func (s *signals) Pid() int                        { return 42 }

// A plan runs each step at its time or on its trigger, heals it after its
// window or on its Until, and records every fault in the timeline.
func TestPlan(t *testing.T) {
	a, b := &signals{}, &signals{}
	trigger, until := make(chan struct{}), make(chan struct{})
	plan := Plan{Steps: []Step{
		{Fault: StopProcess, On: a, At: 10 * time.Millisecond, For: 20 * time.Millisecond},
		{Fault: StopProcess, On: b, Trigger: trigger, Until: until},
		{Fault: KillProcess, On: "not a process"},
	}}
	if err := plan.Available(); err == nil || !strings.Contains(err.Error(), "acts on a process") {
		t.Errorf("Available: %v", err)
	}
	tl := &evidence.Timeline{}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- plan.Run(context.Background(), func() int64 { return int64(time.Since(start)) }, tl) }()
	time.Sleep(50 * time.Millisecond)
	close(trigger)
	time.Sleep(20 * time.Millisecond)
	close(until)
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "kill-process") {
		t.Errorf("a step that cannot act: %v", err)
	}
	if !slices.Equal(a.got, []syscall.Signal{syscall.SIGSTOP, syscall.SIGCONT}) || !slices.Equal(b.got, []syscall.Signal{syscall.SIGSTOP, syscall.SIGCONT}) {
		t.Errorf("signals: %v, %v", a.got, b.got)
	}
	faults := tl.Faults()
	if len(faults) != 3 {
		t.Fatalf("timeline: %+v", faults)
	}
	for _, f := range faults {
		if f.Fault == "stop-process" && (f.EndNS <= f.StartNS || f.Target != "pid 42" || f.NotInjected) {
			t.Errorf("fault %+v", f)
		}
		if f.Fault == "kill-process" && !f.NotInjected {
			t.Errorf("the step that could not act is not marked as not injected: %+v", f)
		}
	}
	if plan.End() != 30*time.Millisecond {
		t.Errorf("End %v", plan.End())
	}
}
