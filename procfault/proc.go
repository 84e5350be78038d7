package procfault

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// waitDelay bounds how long reaping a killed worker may wait for its output
// pipes to close.
const waitDelay = 5 * time.Second

// worker is a running worker process, as its parent sees it.
//
// No worker outlives its parent's run: it runs in a process group of its
// own (Setpgid), which is SIGKILLed when the run's context ends (also on an
// interrupt) and by close; the kernel SIGKILLs it should the parent die
// first (Pdeathsig); and it is always reaped (a goroutine Waits from Start
// on, and close waits for that).
type worker struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	events chan message // closed once the pipe is at its end
	// exited is closed once the process is reaped; waitErr is then set.
	exited  chan struct{}
	waitErr error
	stderr  *tail

	mu      sync.Mutex
	readErr error // a malformed line, if any
	lines   int   // lines read
}

// startWorker starts a worker with configuration cfg.
func startWorker(ctx context.Context, c Command, cfg workerConfig) (*worker, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode worker configuration: %w", err)
	}
	cmd := exec.CommandContext(ctx, c.Path, c.args(raw)...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay
	w := &worker{cmd: cmd, events: make(chan message, 256), exited: make(chan struct{}), stderr: &tail{max: 4 << 10}}
	cmd.Stdout, cmd.Stderr = w.stderr, w.stderr
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("worker stdin: %w", err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("worker pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{pw}
	err = cmd.Start()
	pw.Close() // the worker holds the write end now; EOF comes when it exits
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start worker %s: %w", c.Path, err)
	}
	w.pid = cmd.Process.Pid
	if c.OnStart != nil {
		c.OnStart(w.pid)
	}
	go w.read(r)
	go func() {
		w.waitErr = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// read turns the pipe's lines into events until its end. A last line
// without a newline was cut by the worker's death and is dropped.
func (w *worker) read(r *os.File) {
	defer close(w.events)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		m, err := decodeMessage(line)
		w.mu.Lock()
		w.lines++
		w.readErr = errors.Join(w.readErr, err)
		w.mu.Unlock()
		if err == nil {
			w.events <- m
		}
	}
}

// signal sends sig to the worker's process group, unless it is reaped.
func (w *worker) signal(sig syscall.Signal) error {
	select {
	case <-w.exited:
		return nil
	default:
	}
	if err := syscall.Kill(-w.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%v to worker %d: %w", sig, w.pid, err)
	}
	return nil
}

// tell writes one line to the worker's standard input.
func (w *worker) tell(line string) error {
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		return fmt.Errorf("tell worker %d %q: %w", w.pid, line, err)
	}
	return nil
}

// close kills the worker if it still runs, reads what it wrote before it
// died, and reaps it.
func (w *worker) close() {
	_ = w.signal(syscall.SIGKILL)
	for range w.events {
	}
	<-w.exited
}

// drain returns the events still to come, once the worker has exited or
// been killed, and reaps it.
func (w *worker) drain() []message {
	var rest []message
	for m := range w.events {
		rest = append(rest, m)
	}
	<-w.exited
	return rest
}

// status describes how the worker ended and what it printed, for errors.
func (w *worker) status() string {
	var parts []string
	select {
	case <-w.exited:
		if w.waitErr != nil {
			parts = append(parts, w.waitErr.Error())
		} else {
			parts = append(parts, "exit status 0")
		}
	default:
		parts = append(parts, "still running")
	}
	w.mu.Lock()
	if w.readErr != nil {
		parts = append(parts, w.readErr.Error())
	}
	if w.lines == 0 {
		parts = append(parts, "it reported nothing (a test binary acts as a worker only if its TestMain calls procfault.MainIfWorker)")
	}
	w.mu.Unlock()
	if s := strings.TrimSpace(w.stderr.String()); s != "" {
		parts = append(parts, "output: "+strings.Join(strings.Fields(s), " "))
	}
	return strings.Join(parts, "; ")
}

// killGroup SIGKILLs the process group pid leads.
func killGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
