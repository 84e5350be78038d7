package sqld

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// process runs a sqld binary.
type process struct{ bin string }

// NewProcess finds the sqld binary: bin if given, else $SQLD, else sqld on
// PATH.
func NewProcess(bin string) (Provider, error) {
	from := "the sqld= flag"
	if bin == "" {
		bin, from = os.Getenv("SQLD"), "$SQLD"
	}
	if bin == "" {
		bin, from = "sqld", "PATH"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("no sqld binary (%q from %s not found; give sqld=PATH, $SQLD or put sqld on PATH)", bin, from)
	}
	return process{bin: path}, nil
}

func (p process) Name() string { return "sqld process (" + p.bin + ")" }

// Start runs sqld on a free loopback port with its data in dir and its
// output in dir/sqld.log.
func (p process) Start(ctx context.Context, dir string) (Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &procServer{bin: p.bin, dir: dir, url: fmt.Sprintf("http://127.0.0.1:%d", port),
		args: []string{"--http-listen-addr", fmt.Sprintf("127.0.0.1:%d", port), "--db-path", filepath.Join(dir, "data.sqld")}}
	if err := s.start(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// procServer is one sqld process, restartable on the same data and port.
type procServer struct {
	bin, dir, url string
	args          []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	werr error         // cmd's exit, once done
}

func (s *procServer) URL() string { return s.url }

// start launches the process and waits for /health.
func (s *procServer) start(ctx context.Context) error {
	log, err := os.OpenFile(filepath.Join(s.dir, "sqld.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("sqld log: %w", err)
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, log, log
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		log.Close()
		s.mu.Lock()
		s.werr = err
		s.mu.Unlock()
		close(done)
	}()
	alive := func() error {
		select {
		case <-done:
			return fmt.Errorf("sqld exited before it was healthy (see %s)", filepath.Join(s.dir, "sqld.log"))
		default:
			return nil
		}
	}
	return waitHealthy(ctx, s.url, alive)
}

// Kill sends SIGKILL and waits for the process to exit.
func (s *procServer) Kill(ctx context.Context) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill sqld: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill sqld: %w", ctx.Err())
	}
}

// Restart starts sqld again with the same arguments.
func (s *procServer) Restart(ctx context.Context) error {
	if err := s.Kill(ctx); err != nil {
		return err
	}
	return s.start(ctx)
}

// Close kills the process if it runs. The data folder is the caller's.
func (s *procServer) Close() error {
	return s.Kill(context.Background())
}
