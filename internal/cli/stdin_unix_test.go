//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallLeaseHistory is a lease history of a claim and a checkpoint.
const smallLeaseHistory = `{"lease_history":{"ops":2}}
{"client":1,"worker":"w","kind":"claim_next","run":"r","token":1,"lease":1000000000,"now":1735689600001000000,"outcome":"ok","version":2,"expires":1735689601001000000,"call":1,"return":2}
{"client":1,"worker":"w","kind":"commit_checkpoint","run":"r","token":1,"now":1735689600016000000,"expected":2,"seq":1,"outcome":"ok","version":3,"call":3,"return":4}
`

// TestCheckReadsAPipe: check takes a history from a named pipe (as
// /dev/stdin or a shell's <(…) are) as from a file: a lease history, which
// is read a second time once it is found not to be an execution store's,
// was "a history that holds no operations" (exit 2), the pipe being
// drained by the first read; a failed check's visualization goes to the
// current folder, as nothing is beside a pipe.
func TestCheckReadsAPipe(t *testing.T) {
	lost := testdata(t, "lost_update.jsonl")
	dir := t.TempDir()
	t.Chdir(dir)
	for _, c := range []struct {
		name  string
		input []byte
		code  int
		want  string
	}{
		{"lease history", []byte(smallLeaseHistory), ExitOK, "PASS (leases: Ok); 2 operations of a lease history"},
		{"lost update", lost, ExitFail, "visualization: pipe.visualization.html"},
	} {
		pipe := filepath.Join(dir, "pipe")
		if err := syscall.Mkfifo(pipe, 0o600); err != nil {
			t.Skipf("NOT RUN: no named pipe here: %v", err)
		}
		done := feedPipe(pipe, c.input)
		code, stdout, stderr := run(t, "check", pipe)
		done()
		if code != c.code || !strings.Contains(stdout, c.want) {
			t.Errorf("check of a pipe holding a %s: exit %d, want %d and %q\n%s%s", c.name, code, c.code, c.want, stdout, stderr)
		}
		os.Remove(pipe)
	}
}

// feedPipe writes input to the named pipe for its first reader, then ends
// at once every later reader's read, as a drained /dev/stdin does, until
// the function it returns is called. input must fit in the pipe's buffer
// (64 KiB on Linux): it is written without blocking.
func feedPipe(pipe string, input []byte) (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				if i == 0 {
					f.Write(input)
				}
				f.Close()
			}
			select {
			case <-quit:
				return
			case <-time.After(time.Millisecond):
			}
			if err != nil {
				i-- // no reader yet: the input is still to be written
			}
		}
	}()
	return func() { close(quit); <-finished }
}
