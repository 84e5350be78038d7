package sqld

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitStopped returns once a process's threads have all stopped, and says
// so when they do not within its bound.
func TestWaitStopped(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("NOT RUN: cannot start sleep: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() { _ = cmd.Process.Kill(); <-done }()
	pid := cmd.Process.Pid
	if err := waitStopped(context.Background(), pid, done, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not stop") {
		t.Fatalf("a running process: %v, want it named as not stopped", err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := waitStopped(context.Background(), pid, done, 5*time.Second); err != nil {
		t.Fatalf("a stopped process: %v", err)
	}
	if st, err := ReadProcStat(pid); err != nil || st.State != 'T' {
		t.Errorf("state %q, %v; want T", st.State, err)
	}
	_ = syscall.Kill(pid, syscall.SIGCONT)
}
