package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// supervisor starts child processes and guarantees their end: every child
// it started is killed and reaped by closeAll, whatever state (running,
// stopped by SIGSTOP) it is in. It knows nothing of rqlite, so its cleanup
// can be tested with any program.
type supervisor struct {
	mu     sync.Mutex
	kids   map[string]*child
	closed bool
}

// child is one started process.
type child struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed once the process is reaped
	paused bool
}

// spec says how to start one child.
type spec struct {
	bin  string
	args []string
	// log receives stdout and stderr, appended; "" discards them.
	log string
	// uid, when non-zero, runs the child as that user and group id.
	uid uint32
}

func newSupervisor() *supervisor { return &supervisor{kids: map[string]*child{}} }

// start starts the child called name; one by that name must not be running.
func (s *supervisor) start(name string, sp spec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("supervisor closed")
	}
	if k, ok := s.kids[name]; ok && !k.exited() {
		return fmt.Errorf("%s is already running (pid %d)", name, k.cmd.Process.Pid)
	}
	cmd := exec.Command(sp.bin, sp.args...)
	// Its own process group, so that a terminal's Ctrl-C reaches only the
	// harness, which then cleans up in order; and a death signal, so that
	// it dies with the harness if the harness is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if sp.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: sp.uid, Gid: sp.uid}
	}
	var logf *os.File
	if sp.log != "" {
		f, err := os.OpenFile(sp.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open log of %s: %w", name, err)
		}
		fmt.Fprintf(f, "=== storecheck: starting %s at %s: %s %v\n", name, time.Now().Format(time.RFC3339Nano), sp.bin, sp.args)
		cmd.Stdout, cmd.Stderr, logf = f, f, f
	}
	if err := cmd.Start(); err != nil {
		if logf != nil {
			logf.Close()
		}
		return fmt.Errorf("start %s: %w", name, err)
	}
	k := &child{cmd: cmd, done: make(chan struct{})}
	s.kids[name] = k
	go func() {
		_ = cmd.Wait()
		if logf != nil {
			fmt.Fprintf(logf, "=== storecheck: %s exited at %s: %v\n", name, time.Now().Format(time.RFC3339Nano), cmd.ProcessState)
			logf.Close()
		}
		close(k.done)
	}()
	return nil
}

func (k *child) exited() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// get returns the running child called name.
func (s *supervisor) get(name string) (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.kids[name]
	if !ok || k.exited() {
		return nil, fmt.Errorf("%s is not running", name)
	}
	return k, nil
}

// signal sends sig to the child's process group.
func (k *child) signal(sig syscall.Signal) error {
	if err := syscall.Kill(-k.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to pid %d: %w", sig, k.cmd.Process.Pid, err)
	}
	return nil
}

// wait waits for the child to be reaped, at most d.
func (k *child) wait(d time.Duration) error {
	select {
	case <-k.done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("pid %d still running after %v", k.cmd.Process.Pid, d)
	}
}

// kill sends SIGKILL and waits for the child to be reaped.
func (s *supervisor) kill(name string) error {
	k, err := s.get(name)
	if err != nil {
		return err
	}
	if err := k.signal(syscall.SIGKILL); err != nil {
		return err
	}
	return k.wait(10 * time.Second)
}

// stop sends SIGTERM (after SIGCONT, should it be paused), waits up to
// grace, then kills.
func (s *supervisor) stop(name string, grace time.Duration) error {
	k, err := s.get(name)
	if err != nil {
		return err
	}
	_ = k.signal(syscall.SIGCONT)
	if err := k.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if k.wait(grace) == nil {
		return nil
	}
	if err := k.signal(syscall.SIGKILL); err != nil {
		return err
	}
	return k.wait(10 * time.Second)
}

// pause sends SIGSTOP; resume SIGCONT.
func (s *supervisor) pause(name string) error {
	k, err := s.get(name)
	if err != nil {
		return err
	}
	if err := k.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	s.mu.Lock()
	k.paused = true
	s.mu.Unlock()
	return nil
}

func (s *supervisor) resume(name string) error {
	k, err := s.get(name)
	if err != nil {
		return err
	}
	if err := k.signal(syscall.SIGCONT); err != nil {
		return err
	}
	s.mu.Lock()
	k.paused = false
	s.mu.Unlock()
	return nil
}

// pids lists the children still running.
func (s *supervisor) pids() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, k := range s.kids {
		if !k.exited() {
			out = append(out, k.cmd.Process.Pid)
		}
	}
	return out
}

// closeAll kills and reaps every child, stopped ones included, and refuses
// new starts.
func (s *supervisor) closeAll() error {
	s.mu.Lock()
	s.closed = true
	kids := make([]*child, 0, len(s.kids))
	for _, k := range s.kids {
		kids = append(kids, k)
	}
	s.mu.Unlock()
	var errs []error
	for _, k := range kids {
		if k.exited() {
			continue
		}
		// SIGKILL ends a stopped process too; SIGCONT first costs nothing.
		_ = k.signal(syscall.SIGCONT)
		if err := k.signal(syscall.SIGKILL); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := k.wait(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
