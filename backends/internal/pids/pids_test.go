package pids

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if !Alive(1) {
		t.Fatal("pid 1 (another user's, or ours as root) is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid) {
		t.Fatalf("pid %d, exited and reaped, is alive", cmd.Process.Pid)
	}
}

// A process that exited but was not reaped yet (a zombie) is not alive.
func TestZombieIsNotAlive(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	if !Alive(cmd.Process.Pid) {
		t.Fatal("a running child is not alive")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); Alive(cmd.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("pid %d, killed and not reaped (a zombie), is alive after 5 s", cmd.Process.Pid)
		}
	}
}
