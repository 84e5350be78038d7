package load

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func needStress(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("stress-ng"); err != nil {
		t.Skip("NOT RUN: stress-ng is not installed")
	}
}

// The load runs until Stop, and nothing of it is left after.
func TestStressStartsAndStopsLeavingNothing(t *testing.T) {
	needStress(t)
	l, err := Start(context.Background(), Spec{Kind: "stress-ng", CPU: 1, Limit: time.Minute, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pid := l.PID()
	time.Sleep(2500 * time.Millisecond)
	if err := syscall.Kill(-pid, 0); err != nil {
		t.Fatalf("stress-ng's group is not running: %v", err)
	}
	st, err := l.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("stress-ng's group %d is still there after Stop (%v)", pid, err)
	}
	if st.Samples < 1 || st.Load == "none" || st.CPUs < 1 {
		t.Errorf("stats %+v", st)
	}
	if _, err := l.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}

// An interrupted soak (its context cancelled) stops the load too.
func TestStressEndsWithTheContext(t *testing.T) {
	needStress(t)
	ctx, cancel := context.WithCancel(context.Background())
	l, err := Start(ctx, Spec{Kind: "stress-ng", CPU: 1, Limit: time.Minute, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pid := l.PID()
	cancel()
	<-l.done // the sampler saw the context end and killed the group
	<-l.exited
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("stress-ng's group %d outlived the cancelled context", pid)
	}
	_, _ = l.Stop()
}

func TestUnknownLoad(t *testing.T) {
	if _, err := Start(context.Background(), Spec{Kind: "fork-bomb"}); err == nil {
		t.Error("an unknown load kind started")
	}
}

// A spec with a negative stressor count or a limit that is not positive is
// refused and starts nothing: it was run with one stressor per CPU, or an
// hour's limit, instead of what was given.
func TestBadSpecIsRefused(t *testing.T) {
	needStress(t)
	for _, spec := range []Spec{
		{Kind: "stress-ng", CPU: -1, Limit: time.Minute},
		{Kind: "stress-ng", IO: -1, Limit: time.Minute},
		{Kind: "stress-ng", CPU: 1, Limit: 0},
		{Kind: "stress-ng", CPU: 1, Limit: -time.Second},
		{Kind: "cpu-burn", Limit: time.Minute},
	} {
		if err := spec.Check(); err == nil {
			t.Errorf("Check(%+v) accepted it", spec)
		}
		l, err := Start(context.Background(), spec)
		if err == nil {
			st, _ := l.Stop()
			t.Errorf("Start(%+v) started %q", spec, st.Load)
		}
	}
	if err := (Spec{Kind: "stress-ng", Limit: time.Second}).Check(); err != nil {
		t.Errorf("a good spec refused: %v", err)
	}
}
