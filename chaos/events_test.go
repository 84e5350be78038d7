package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// eventFake is a fakeCluster whose server events are scripted: events[id]
// lists what node id shows, one per WaitEvent call, "" for nothing.
type eventFake struct {
	*fakeCluster
	events map[string][]string
	kills  []string
	steps  []string // kills, starts, step-downs, holds and releases, in order
}

func (e *eventFake) EventsAvailable() error        { return nil }
func (e *eventFake) LogMark(string) (int64, error) { return 0, nil }
func (e *eventFake) WaitEvent(_ context.Context, id, event string, _ int64, _ time.Duration) (string, error) {
	next := ""
	if q := e.events[id]; len(q) > 0 {
		next, e.events[id] = q[0], q[1:]
	}
	if next != event {
		return "", errors.New("no " + event)
	}
	return "line: " + event, nil
}
func (e *eventFake) Kill(ctx context.Context, id string) error {
	e.kills = append(e.kills, id)
	e.steps = append(e.steps, "kill "+id)
	return e.fakeCluster.Kill(ctx, id)
}
func (e *eventFake) Start(ctx context.Context, id string) error {
	e.steps = append(e.steps, "start "+id)
	return e.fakeCluster.Start(ctx, id)
}
func (e *eventFake) StepDown(ctx context.Context) error {
	e.steps = append(e.steps, "step down")
	return e.fakeCluster.StepDown(ctx)
}

// TestKillDuringInstall: the follower is killed, started when the leader
// has snapshotted, killed again at its install, and the heal starts it; a
// follower that catches up from the log is left running, with no hit.
func TestKillDuringInstall(t *testing.T) {
	ctx := context.Background()
	f := &eventFake{fakeCluster: newFake(), events: map[string][]string{"n1": {"snapshot", "snapshot"}, "n2": {"snapshot-install"}, "n3": {"snapshot-install"}}}
	inj, err := KillDuringInstall{}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.kills) != 2 || f.kills[0] != f.kills[1] || inj.Metrics["install_kills"] != 1 || !strings.Contains(inj.Detail, "began installing") {
		t.Fatalf("kills %v, injection %+v; want the same follower killed twice and one hit", f.kills, inj)
	}
	if !f.down[inj.Target] {
		t.Fatalf("%s is not down after the second kill", inj.Target)
	}
	if err := inj.Heal(ctx); err != nil || len(f.broken()) != 0 {
		t.Fatalf("heal: %v, still broken: %v", err, f.broken())
	}

	// No install: the follower was started and stays up; the heal only waits.
	f = &eventFake{fakeCluster: newFake(), events: map[string][]string{"n1": {"snapshot", "snapshot"}}}
	inj, err = KillDuringInstall{}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil || len(f.kills) != 1 || inj.Metrics["install_kills"] != 0 || f.down[inj.Target] || !strings.Contains(inj.Detail, "without installing") {
		t.Fatalf("no install: %v, kills %v, injection %+v", err, f.kills, inj)
	}
	if err := inj.Heal(ctx); err != nil {
		t.Fatal(err)
	}

	// No snapshot: the follower stays down until the heal starts it.
	f = &eventFake{fakeCluster: newFake(), events: map[string][]string{}}
	inj, err = KillDuringInstall{}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil || !f.down[inj.Target] || inj.Metrics["install_kills"] != 0 || !strings.Contains(inj.Detail, "took no snapshot") {
		t.Fatalf("no snapshot: %v, injection %+v", err, inj)
	}
	if err := inj.Heal(ctx); err != nil || len(f.broken()) != 0 {
		t.Fatalf("heal: %v, still broken: %v", err, f.broken())
	}

	if err := (KillDuringInstall{}).Available(newFake()); err == nil {
		t.Error("available on a cluster without events")
	}
}

// TestKillDuringInstallHeld: with Hold, the traffic is held before the
// follower is restarted; after the kill at its install the leader steps
// down and the follower is started at once, and the traffic is released
// only then — so that a new leader sends it entries from a log the traffic
// has not compacted, instead of the old leader sending a fresh snapshot
// that would overwrite what the interrupted install left (rqlite#2747).
func TestKillDuringInstallHeld(t *testing.T) {
	ctx := context.Background()
	f := &eventFake{fakeCluster: newFake(), events: map[string][]string{"n1": {"snapshot", "snapshot", "snapshot"}, "n2": {"snapshot-install"}, "n3": {"snapshot-install"}}}
	releases := 0
	hold := func() func() {
		f.steps = append(f.steps, "hold")
		return func() { releases++; f.steps = append(f.steps, "release") }
	}
	killed := func(_ context.Context, id string) { f.steps = append(f.steps, "killed "+id) }
	inj, err := KillDuringInstall{Hold: hold, Killed: killed}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	id := inj.Target
	// Killed is told of the kill on the install line only, while the
	// follower is down: before the step-down and its restart.
	want := []string{"kill " + id, "hold", "start " + id, "kill " + id, "killed " + id, "step down", "start " + id, "release"}
	if strings.Join(f.steps, ", ") != strings.Join(want, ", ") || releases != 1 {
		t.Fatalf("steps %v (%d releases); want %v", f.steps, releases, want)
	}
	if f.down[id] || f.leader == "n1" || inj.Metrics["install_kills"] != 1 || !strings.Contains(inj.Detail, "stepped down") {
		t.Fatalf("after the injection: %s down %v, leader %s, injection %+v", id, f.down[id], f.leader, inj)
	}
	if err := inj.Heal(ctx); err != nil || len(f.broken()) != 0 || len(f.steps) != len(want) {
		t.Fatalf("heal: %v, still broken: %v, steps %v (the heal only waits)", err, f.broken(), f.steps)
	}

	// No install: the traffic is released all the same.
	f = &eventFake{fakeCluster: newFake(), events: map[string][]string{"n1": {"snapshot", "snapshot"}}}
	releases = 0
	inj, err = KillDuringInstall{Hold: hold, Killed: killed}.Inject(ctx, f, rand.New(rand.NewPCG(1, 2)))
	if err != nil || releases != 1 || inj.Metrics["install_kills"] != 0 || slices.ContainsFunc(f.steps, func(s string) bool { return strings.HasPrefix(s, "killed") }) {
		t.Fatalf("no install: %v, %d releases, injection %+v", err, releases, inj)
	}
}
