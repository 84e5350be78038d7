//go:build unix

package adapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// TestOpenFailures: an adapter that cannot start or fails its hello makes
// Open fail with one line naming the adapter and what went wrong, and
// leaves no process behind.
func TestOpenFailures(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		want []string
	}{
		{"missing command", []string{"/nonexistent/adapter", "x"}, []string{`"/nonexistent/adapter x": start:`, "no such file"}},
		{"exits before hello", self("exit-at-hello"), []string{"hello (request 1)", "closed its stdout", "it exited: exit status 2", "cannot open the database"}},
		{"silent at hello", self("silent-hello"), []string{"hello (request 1): no response within 300ms; the adapter was killed"}},
		{"garbage hello", self("garbage-hello"), []string{"malformed response on stdout line 1", `"Hello, harness!"`}},
		{"other protocol", self("old-protocol"), []string{"hello refused: not_applied: protocol 1 not supported"}},
		{"missing ops", self("missing-ops"), []string{"does not support the required operations [commit load_for_event"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := quiet(t)
			if c.name == "silent at hello" {
				opt.HelloTimeout = 300 * time.Millisecond
			}
			s, err := Open(context.Background(), c.argv, model.DefaultConfig(), opt)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			for _, w := range append(c.want, "adapter "+displayName(c.argv)) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			noChildren(t)
			if entries, _ := os.ReadDir(opt.Dir); len(entries) > 0 {
				t.Errorf("store directory left behind: %v", entries)
			}
		})
	}
}

// TestProtocolViolations: a malformed line, a wrong id, a missing field, an
// unknown error kind, an exit or a hang fail the operation with a clear
// error (outcome unknown: never ErrNotApplied) and break the store: every
// later operation fails at once, not applied, quoting the first error.
func TestProtocolViolations(t *testing.T) {
	cases := []struct {
		mode string
		ops  int // operations that succeed first
		want []string
	}{
		{"bad-json", 0, []string{"save (request 2): malformed response on stdout line 2", `"{\"id\": 2, \"ok\": tru"`}},
		{"wrong-id", 0, []string{"stdout line 2 answers request 3, not 2"}},
		{"no-result", 0, []string{`stdout line 2: "ok": true without "result"`}},
		{"unknown-kind", 0, []string{`unknown error kind "oops"`}},
		{"bad-result", 0, []string{"request 2, stdout line 2): save: protocol violation: malformed result", `seven`}},
		{"exit-mid", 0, []string{"save (request 2): the adapter closed its stdout with the request in flight; it exited: exit status 3; its stderr ended: fake adapter: Traceback: boom"}},
		{"hang", 0, []string{"save (request 2): no response within 300ms; the adapter was killed; its stderr ended: fake adapter: waiting for a lock"}},
		{"exit-mid-bg", 0, []string{"save (request 2): the adapter exited with the request in flight", "it exited: exit status 11; its stderr ended: fake adapter: Traceback: boom"}},
		{"extra-line", 1, []string{"save (request 3): stdout line 3 answers request 424242, not 3"}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			opt := quiet(t)
			if c.mode == "hang" {
				opt.Timeout = 300 * time.Millisecond
			}
			if c.mode == "exit-mid-bg" {
				opt.Timeout = 20 * time.Second // the exit must be seen long before
			}
			ctx := context.Background()
			s, err := Open(ctx, self(c.mode), model.DefaultConfig(), opt)
			if err != nil {
				t.Fatal(err)
			}
			defer noChildren(t)
			defer s.Close()
			for i := range c.ops {
				if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			start := time.Now()
			err = s.Save(ctx, &model.Execution{ID: "a"})
			if err == nil {
				t.Fatal("the violation went unnoticed")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the violation took %v to notice", d)
			}
			if !errors.Is(err, ErrBroken) || !errors.Is(err, model.ErrBroken) {
				t.Errorf("the violation is not ErrBroken: %v", err)
			}
			first := s.(model.Breakable).Broken()
			if first == nil || first.Error() != err.Error() {
				t.Errorf("Broken() = %v, want the violation %v", first, err)
			}
			for _, w := range append(c.want, "adapter "+displayName(self(c.mode))) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if errors.Is(err, model.ErrNotApplied) {
				t.Errorf("a write whose answer was lost is marked not applied: %v", err)
			}
			_, err = s.Load(ctx, "a")
			if err == nil || !strings.Contains(err.Error(), "unusable after an earlier failure") || !strings.Contains(err.Error(), c.want[0]) {
				t.Errorf("the store is not broken after the violation: %v", err)
			}
			if err := s.AckOutbox(ctx, 1); !errors.Is(err, model.ErrNotApplied) || !errors.Is(err, ErrBroken) {
				t.Errorf("a write on a broken store is not marked not applied and broken: %v", err)
			}
		})
	}
}

// TestLaterHelloDiffers: a process the pool starts later that answers
// hello unlike the first breaks the store (ErrBroken), naming the
// difference.
func TestLaterHelloDiffers(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, self("later-hello-differs"), model.DefaultConfig(), quiet(t))
	if err != nil {
		t.Fatal(err)
	}
	defer noChildren(t)
	defer s.Close()
	b := s.(model.Breakable)
	deadline := time.Now().Add(10 * time.Second)
	for b.Broken() == nil && time.Now().Before(deadline) {
		done := make(chan struct{})
		for range 2 { // two at once: the pool starts a second process
			go func() { _, _ = s.Load(ctx, "a"); done <- struct{}{} }()
		}
		<-done
		<-done
	}
	first := b.Broken()
	if !errors.Is(first, ErrBroken) || !strings.Contains(first.Error(), "unlike the first process") {
		t.Fatalf("Broken() = %v", first)
	}
	if _, err := s.Load(ctx, "a"); !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "unlike the first process") {
		t.Errorf("load after the break: %v", err)
	}
}

// TestLingerAfterShutdown: a process that answers shutdown and keeps
// running is killed after the shutdown timeout (§4.3) and noted, not an
// error of Close.
func TestLingerAfterShutdown(t *testing.T) {
	opt := quiet(t)
	opt.ShutdownTimeout = 300 * time.Millisecond
	s, err := Open(context.Background(), self("linger-after-shutdown"), model.DefaultConfig(), opt)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("close took %v, want about the shutdown timeout", d)
	}
	noChildren(t)
}

// TestErrorAnswers: the adapter's definite and unknown failures keep their
// meaning and do not break the store.
func TestErrorAnswers(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		mode       string
		notApplied bool
		want       string
	}{
		{"not-applied", true, "save: write not applied: disk on fire"},
		{"unknown-outcome", false, "save failed, outcome unknown: connection lost during COMMIT"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			s, err := Open(ctx, self(c.mode), model.DefaultConfig(), quiet(t))
			if err != nil {
				t.Fatal(err)
			}
			defer noChildren(t)
			defer s.Close()
			for range 2 {
				err := s.Save(ctx, &model.Execution{ID: "a"})
				if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, model.ErrNotApplied) != c.notApplied {
					t.Errorf("save: %v; want %q, not applied %v", err, c.want, c.notApplied)
				}
				if errors.Is(err, ErrBroken) {
					t.Errorf("an error answer is ErrBroken: %v", err)
				}
			}
			if err := s.(model.Breakable).Broken(); err != nil {
				t.Errorf("an error answer broke the store: %v", err)
			}
		})
	}
}

// TestCancelKillsProcess: a caller's context ending with a request in flight
// kills that process (the write's outcome is unknown) without breaking the
// store; the next operation starts a new process.
func TestCancelKillsProcess(t *testing.T) {
	opt := quiet(t)
	s, err := Open(context.Background(), self("hang"), model.DefaultConfig(), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer noChildren(t)
	defer s.Close()
	st, _ := Unwrap(s)
	first := st.PIDs()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = s.Save(ctx, &model.Execution{ID: "a"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, model.ErrNotApplied) || !strings.Contains(err.Error(), "the adapter was killed") {
		t.Fatalf("save: %v", err)
	}
	if err := st.usable(); err != nil || st.Broken() != nil {
		t.Fatalf("a cancelled call broke the store: %v %v", err, st.Broken())
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	_ = s.Save(ctx2, &model.Execution{ID: "a"}) // a new process, which hangs too
	if now := st.PIDs(); len(now) > 0 && len(first) > 0 && now[0] == first[0] {
		t.Errorf("the killed process %d is still in the pool", first[0])
	}
}

// TestCloseIsIdempotent: closing twice is fine, and operations after Close
// fail as not applied.
func TestCloseIsIdempotent(t *testing.T) {
	s, err := Open(context.Background(), self("go-sqlite"), model.DefaultConfig(), quiet(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), &model.Execution{ID: "a"}); !errors.Is(err, model.ErrNotApplied) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("save after close: %v", err)
	}
	noChildren(t)
}

// TestOpenContextKills: the processes die with the context Open was given.
func TestOpenContextKills(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Open(ctx, self("go-sqlite"), model.DefaultConfig(), quiet(t))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	noChildren(t)
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("close after the context ended: %v", err)
		}
	}()
	if _, err := s.Load(context.Background(), "a"); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("load after the context ended: %v", err)
	}
}

// TestStoppedProcess: a SIGSTOP injected through Faults stalls the
// operations sent to that process; a SIGCONT lets them finish, and a caller
// that gives up first kills the process without breaking the store.
func TestStoppedProcess(t *testing.T) {
	ctx := context.Background()
	// One process, so the stopped one is the one every operation goes to.
	opt := quiet(t)
	opt.MaxProcesses = 1
	s, err := Open(ctx, self("go-sqlite"), model.DefaultConfig(), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer noChildren(t)
	defer s.Close()
	faults := s.(Faults)
	pid := faults.PIDs()[0]
	if err := faults.Signal(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid) // kill(2) returns before the target has stopped
	time.AfterFunc(300*time.Millisecond, func() { _ = faults.Signal(pid, syscall.SIGCONT) })
	start := time.Now()
	if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
		t.Fatalf("save across a stop and a continue: %v", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("save took %v: the process was not stopped", d)
	}
	if err := faults.Signal(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := s.Save(short, &model.Execution{ID: "a", Version: 1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("save to a stopped process: %v", err)
	}
	if exe, err := s.Load(ctx, "a"); err != nil || exe == nil {
		t.Fatalf("load on a new process after the stopped one was killed: %v, %v", exe, err)
	}
}

// waitStopped waits (bounded) until /proc shows pid in the stopped state.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for range 200 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("process %d: %v", pid, err)
		}
		// The state is the first field after the parenthesised command.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not stop within 1s of SIGSTOP", pid)
}

// TestStaleStoreFoldersAreSwept: the store folder of a storecheck that was
// killed before it could remove it (kill -9) is removed by the next Open in
// the same parent; a folder of a process still running is left alone.
func TestStaleStoreFoldersAreSwept(t *testing.T) {
	opt := quiet(t)
	opt.Dir = t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(opt.Dir, fmt.Sprintf("storecheck-adapter-%d-x", gone.Process.Pid))
	live := filepath.Join(opt.Dir, fmt.Sprintf("storecheck-adapter-%d-y", os.Getpid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(context.Background(), self("not-applied"), model.DefaultConfig(), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of a storecheck that is gone is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the folder of a running storecheck was removed: %v", err)
	}
}
