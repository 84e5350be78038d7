package worker

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Arg is the hidden argument that makes the binary a worker:
// `storecheck __worker ROLE`. It is not meant to be typed by hand.
const Arg = "__worker"

// env marks a process started as a worker, so that a binary can tell.
const env = "STORECHECK_WORKER"

// waitDelay bounds how long reaping a killed worker may wait for its
// output pipes to close.
const waitDelay = 5 * time.Second

// Command is how the parent starts workers: a program and the arguments
// that come before Arg.
type Command struct {
	Path string
	Args []string
	// Env is added to the parent's environment: secrets go here.
	Env []string
	// OnStart, when set, is called with the pid of every worker started,
	// before anything else happens to it; tests use it to check that no
	// worker outlives a run.
	OnStart func(pid int)
}

// Self re-executes the running binary, or its companion build for
// workers (Companion) when one built from the same source sits beside it.
// In a test binary the arguments start with -test.run=^$: one whose
// TestMain calls Main becomes the worker, and one that does not runs no
// test and exits, so that the run fails to start instead of running the
// tests again.
func Self() (Command, error) {
	exe, err := os.Executable()
	if err != nil {
		return Command{}, fmt.Errorf("cannot find the running binary to start workers: %w", err)
	}
	c := Command{Path: exe}
	if testing.Testing() {
		c.Args = []string{"-test.run=^$"}
		return c, nil
	}
	if w, ok := companion(exe); ok {
		c.Path = w
	}
	return c, nil
}

// Companion is the file name of storecheck's build for worker processes,
// cmd/storecheck-worker: the worker roles alone, built by make build with
// the tag storecheck_nocontainers, which leaves container support out; it
// starts in a third of storecheck's time (docs/PERFORMANCE.md). A scenario
// that starts dozens of workers (crash-recovery, power-loss) starts them
// from it.
const Companion = "storecheck-worker"

// companion returns the companion build beside exe when it was built from
// the same source as the running binary (sameSource); otherwise the
// running binary starts its workers itself.
func companion(exe string) (string, bool) {
	path := filepath.Join(filepath.Dir(exe), Companion)
	theirs, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", false
	}
	ours, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	return path, sameSource(ours, theirs)
}

// sameSource says whether two builds come from one commit of one module
// with no uncommitted change, by the same Go with the same settings (the
// target, cgo, flags; the build tags aside), and every module the
// companion holds is one the running binary holds at the same version: a
// companion left from another commit, built for another machine or
// without cgo, or any build of a tree with changes, is never taken for a
// worker of this one.
func sameSource(ours, theirs *debug.BuildInfo) bool {
	if ours.GoVersion != theirs.GoVersion || ours.Main.Path != theirs.Main.Path || ours.Main.Version != theirs.Main.Version {
		return false
	}
	rev, clean := vcsState(ours)
	theirRev, theirClean := vcsState(theirs)
	if rev == "" || rev != theirRev || !clean || !theirClean {
		return false
	}
	if !maps.Equal(settings(ours), settings(theirs)) {
		return false
	}
	have := make(map[string]string, len(ours.Deps))
	for _, d := range ours.Deps {
		have[d.Path] = moduleVersion(d)
	}
	for _, d := range theirs.Deps {
		if v, ok := have[d.Path]; !ok || v != moduleVersion(d) {
			return false
		}
	}
	return true
}

// vcsState is a build's VCS revision and whether its tree had no
// uncommitted change.
func vcsState(bi *debug.BuildInfo) (revision string, clean bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			clean = s.Value == "false"
		}
	}
	return revision, clean
}

// settings are a build's settings but its tags, which are what tells the
// companion from the binary.
func settings(bi *debug.BuildInfo) map[string]string {
	m := make(map[string]string, len(bi.Settings))
	for _, s := range bi.Settings {
		if s.Key != "-tags" {
			m[s.Key] = s.Value
		}
	}
	return m
}

// moduleVersion is a dependency's version and sum, or its replacement's.
func moduleVersion(m *debug.Module) string {
	if m.Replace != nil {
		m = m.Replace
	}
	return m.Path + "@" + m.Version + " " + m.Sum
}

// With returns c with more environment variables.
func (c Command) With(env ...string) Command {
	c.Env = append(slices.Clone(c.Env), env...)
	return c
}

// Message is one line a worker wrote: its type and the whole line, and
// the body that came after the line when the worker sent one
// (Child.SendBody).
type Message struct {
	Type string
	Raw  json.RawMessage
	Body []byte
}

// maxBody bounds a message's body: a line that announces more is taken
// for a broken stream.
const maxBody = 1 << 30

// Decode reads the message into v.
func (m Message) Decode(v any) error {
	if err := json.Unmarshal(m.Raw, v); err != nil {
		return fmt.Errorf("worker message %s: %w", m.Type, err)
	}
	return nil
}

// Process is a running worker, as its parent sees it.
type Process struct {
	role   string
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	events chan Message // closed once the pipe is at its end
	// exited is closed once the process is reaped; waitErr is then set.
	exited  chan struct{}
	waitErr error
	stderr  *tail

	mu      sync.Mutex
	readErr error // a malformed line, if any
	lines   int   // lines read
}

// Start starts a worker of role with configuration cfg (JSON-encoded, its
// first line on standard input). The worker is killed when ctx ends.
func Start(ctx context.Context, c Command, role string, cfg any) (*Process, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode the %s worker's configuration: %w", role, err)
	}
	cmd := exec.CommandContext(ctx, c.Path, append(slices.Clone(c.Args), Arg, role)...)
	cmd.Env = append(append(os.Environ(), env+"=1"), c.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay
	p := &Process{role: role, cmd: cmd, events: make(chan Message, 256), exited: make(chan struct{}), stderr: &tail{max: 4 << 10}}
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("%s worker stdin: %w", role, err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s worker pipe: %w", role, err)
	}
	cmd.ExtraFiles = []*os.File{pw}
	err = cmd.Start()
	pw.Close() // the worker holds the write end now; EOF comes when it exits
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start %s worker %s: %w", role, c.Path, err)
	}
	p.pid = cmd.Process.Pid
	if c.OnStart != nil {
		c.OnStart(p.pid)
	}
	go p.read(r)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	// A program that is not a worker may exit before it reads this; the
	// parent's wait for its first message says so better than EPIPE would.
	_ = p.Tell(string(raw))
	return p, nil
}

// Pid is the worker's process id (and its process group's).
func (p *Process) Pid() int { return p.pid }

// Events delivers the worker's messages; it is closed once the worker has
// exited and everything it wrote was read.
func (p *Process) Events() <-chan Message { return p.events }

// Exited is closed once the worker is reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// read turns the pipe's lines into messages until its end. A last line
// without a newline was cut by the worker's death and is dropped.
func (p *Process) read(r *os.File) {
	defer close(p.events)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		m, body, err := decode(line)
		p.mu.Lock()
		p.lines++
		p.readErr = errors.Join(p.readErr, err)
		p.mu.Unlock()
		if err != nil {
			if body != 0 {
				return // what follows is a body of unknown length: no line can be found in it
			}
			continue
		}
		if body > 0 {
			m.Body = make([]byte, body)
			if _, err := io.ReadFull(br, m.Body); err != nil {
				return // cut by the worker's death, as a last line without its newline is
			}
		}
		p.events <- m
	}
}

// decode reads a line's type, and the length of the body that follows
// the line (0: none).
func decode(line []byte) (m Message, body int, err error) {
	var head struct {
		Type string `json:"type"`
		Body *int   `json:"body"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return Message{}, 0, fmt.Errorf("worker message %.80q: %w", line, err)
	}
	if head.Body != nil {
		body = *head.Body
		if body < 0 || body > maxBody {
			return Message{}, body, fmt.Errorf("worker message %.80q: a body of %d bytes (at most %d)", line, body, maxBody)
		}
	}
	if head.Type == "" {
		return Message{}, body, fmt.Errorf("worker message %.80q has no type", line)
	}
	return Message{Type: head.Type, Raw: json.RawMessage(slices.Clone(line))}, body, nil
}

// Signal sends sig to the worker's process group, unless it is reaped.
func (p *Process) Signal(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%v to %s worker %d: %w", sig, p.role, p.pid, err)
	}
	return nil
}

// Tell writes one line to the worker's standard input.
func (p *Process) Tell(line string) error {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return fmt.Errorf("tell %s worker %d %.40q: %w", p.role, p.pid, line, err)
	}
	return nil
}

// CloseInput closes the worker's standard input: a worker that reads it
// to the end takes that as "stop".
func (p *Process) CloseInput() error { return p.stdin.Close() }

// Close kills the worker if it still runs, reads what it wrote before it
// died, and reaps it.
func (p *Process) Close() {
	_ = p.Signal(syscall.SIGKILL)
	for range p.events {
	}
	<-p.exited
}

// Drain returns the messages still to come, once the worker has exited or
// been killed, and reaps it.
func (p *Process) Drain() []Message {
	var rest []Message
	for m := range p.events {
		rest = append(rest, m)
	}
	<-p.exited
	return rest
}

// Status describes how the worker ended and what it printed, for errors.
func (p *Process) Status() string {
	var parts []string
	select {
	case <-p.exited:
		if p.waitErr != nil {
			parts = append(parts, p.waitErr.Error())
		} else {
			parts = append(parts, "exit status 0")
		}
	default:
		parts = append(parts, "still running")
	}
	p.mu.Lock()
	if p.readErr != nil {
		parts = append(parts, p.readErr.Error())
	}
	if p.lines == 0 {
		parts = append(parts, "it reported nothing (a binary acts as a worker only if it calls worker.Main first thing, a test binary in its TestMain)")
	}
	p.mu.Unlock()
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
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

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
