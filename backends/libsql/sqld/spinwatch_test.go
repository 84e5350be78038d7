package sqld

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSpinWatchWritesEvidence: a process that burns CPU gets its samples
// (and a thread dump where gdb is installed) written beside its log; one
// that sleeps gets nothing.
func TestSpinWatchWritesEvidence(t *testing.T) {
	dir := t.TempDir()
	watch := func(script, name string, limit time.Duration) (string, *exec.Cmd) {
		cmd := exec.Command("/bin/sh", "-c", script)
		if err := cmd.Start(); err != nil {
			t.Skipf("NOT RUN: no /bin/sh: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		w := newSpinWatch(cmd.Process.Pid, filepath.Join(dir, name+".log"))
		w.sample, w.cores, w.windows = 200*time.Millisecond, 0.1, 3
		exited := make(chan struct{})
		watched := make(chan struct{})
		go func() { defer close(watched); w.run(exited) }()
		select {
		case <-watched:
		case <-time.After(limit):
			close(exited)
			<-watched
		}
		return w.evidence, cmd
	}
	spun, _ := watch("while :; do :; done", "sqld-spin", time.Minute)
	b, err := os.ReadFile(spun)
	if err != nil {
		t.Fatalf("no evidence of a spinning process: %v", err)
	}
	text := string(b)
	if !strings.Contains(text, "CPU seconds in each 200ms sample:") || !strings.Contains(text, "thread dump") && !strings.Contains(text, "no thread dump: gdb is not on PATH") {
		t.Errorf("evidence:\n%s", text)
	}
	t.Run("thread dump", func(t *testing.T) {
		switch _, err := exec.LookPath("gdb"); {
		case err != nil:
			if !strings.Contains(text, "no thread dump: gdb is not on PATH") {
				t.Errorf("no gdb, and the evidence does not say why it holds no stack:\n%s", text)
			}
			t.Skip("NOT RUN: no gdb on PATH, so no thread dump to check")
		case strings.Contains(text, "#0 "):
		case strings.Contains(text, "ptrace"):
			// A machine that forbids attaching (no CAP_SYS_PTRACE, yama).
			t.Skipf("NOT RUN: gdb may not attach here:\n%s", text)
		default:
			t.Errorf("gdb is installed but the evidence holds no stack:\n%s", text)
		}
	})
	if _, err := os.Stat(spun + ".partial"); err == nil {
		t.Errorf("a partial evidence file was left")
	}

	idle, _ := watch("sleep 30", "sqld-idle", 2*time.Second)
	if _, err := os.Stat(idle); err == nil {
		t.Errorf("a sleeping process was recorded as spinning")
	}
}

// TestReadProcStat reads a child's name, parent and CPU time, and refuses a
// process that is gone.
func TestReadProcStat(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exec sleep 30")
	if err := cmd.Start(); err != nil {
		t.Skipf("NOT RUN: no /bin/sh: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	st, err := ReadProcStat(cmd.Process.Pid)
	for err == nil && st.Comm != "sleep" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // until sh has exec'ed sleep
		st, err = ReadProcStat(cmd.Process.Pid)
	}
	if err != nil {
		t.Skipf("NOT RUN: no /proc here: %v", err)
	}
	if st.Comm != "sleep" || st.PPID != os.Getpid() || st.CPU < 0 {
		t.Errorf("read %+v, want sleep, parent %d", st, os.Getpid())
	}
}

func TestCPUSecondsOfAGoneProcess(t *testing.T) {
	if _, err := cpuSeconds(os.Getpid()); err != nil {
		t.Skipf("NOT RUN: no /proc here: %v", err)
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	if _, err := cpuSeconds(cmd.Process.Pid); err == nil {
		t.Errorf("a reaped process has CPU times")
	}
}
