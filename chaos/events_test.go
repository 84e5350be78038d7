package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
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
	return e.fakeCluster.Kill(ctx, id)
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
