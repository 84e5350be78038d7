package cluster

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleepBin is a stand-in child: the cleanup logic does not care what the
// child is, only that it is killed and reaped whatever its state.
func sleepBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("NOT RUN: no sleep binary: %v", err)
	}
	return bin
}

// TestSupervisorCloseAll: running, stopped (SIGSTOP) and already killed
// children alike are gone after closeAll, and no new one starts.
func TestSupervisorCloseAll(t *testing.T) {
	bin := sleepBin(t)
	s := newSupervisor()
	log := filepath.Join(t.TempDir(), "a.log")
	for _, name := range []string{"a", "b", "c"} {
		if err := s.start(name, spec{bin: bin, args: []string{"600"}, log: log}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.start("a", spec{bin: bin, args: []string{"600"}}); err == nil {
		t.Error("a second child called a started")
	}
	pids := s.pids()
	if len(pids) != 3 {
		t.Fatalf("pids %v", pids)
	}
	if err := s.pause("b"); err != nil {
		t.Fatal(err)
	}
	if err := s.kill("c"); err != nil {
		t.Fatal(err)
	}
	if err := s.start("c", spec{bin: bin, args: []string{"600"}}); err != nil {
		t.Fatalf("restart after kill: %v", err)
	}
	pids = append(pids, s.pids()...)
	start := time.Now()
	if err := s.closeAll(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("closeAll took %v", time.Since(start))
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists (%v)", pid, err)
		}
	}
	if len(s.pids()) != 0 {
		t.Errorf("children left: %v", s.pids())
	}
	if err := s.start("d", spec{bin: bin, args: []string{"600"}}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("start after closeAll: %v", err)
	}
}

// TestSupervisorStop: a graceful stop ends a child that honours SIGTERM,
// even a paused one, and kill ends one that does not.
func TestSupervisorStop(t *testing.T) {
	bin := sleepBin(t)
	s := newSupervisor()
	defer s.closeAll()
	if err := s.start("a", spec{bin: bin, args: []string{"600"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.pause("a"); err != nil {
		t.Fatal(err)
	}
	if err := s.stop("a", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.resume("a"); err == nil {
		t.Error("resumed a stopped child")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("NOT RUN: no sh: %v", err)
	}
	if err := s.start("stubborn", spec{bin: sh, args: []string{"-c", "trap '' TERM; sleep 600"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the shell install its trap
	if err := s.stop("stubborn", 300*time.Millisecond); err != nil {
		t.Fatalf("stop of a child ignoring SIGTERM: %v", err)
	}
}

// TestIDs covers the small helpers (ports: backends/internal/ports).
func TestIDs(t *testing.T) {
	if ids := nodeIDs(3); strings.Join(ids, ",") != "n1,n2,n3" {
		t.Errorf("ids %v", ids)
	}
	if _, err := (Config{Nodes: 10}).normalize(); err == nil {
		t.Error("a 10-node cluster accepted")
	}
}
