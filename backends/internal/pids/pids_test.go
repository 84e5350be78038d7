package pids

import (
	"os"
	"os/exec"
	"testing"
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
