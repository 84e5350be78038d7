package adapter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/backends/adapter/wire"
)

// process is one running adapter: its pipes and the goroutines that read
// them and reap it. One caller uses it at a time (the pool sees to that),
// except kill and Signal, which may come from anywhere.
type process struct {
	name  string // the adapter's command line, for errors
	pid   int
	cmd   *exec.Cmd
	stdin *os.File
	out   *os.File // stdout's read end
	errR  *os.File // stderr's read end

	lines chan lineResult // stdout, one line at a time
	stop  chan struct{}   // closed by kill: stop waiting for lines
	done  chan struct{}   // closed once the process is reaped
	waitE error           // cmd.Wait's error, set before done closes

	stderr     tail
	stderrDone chan struct{} // closed when stderr has ended
	readers    sync.WaitGroup
	killOnce   sync.Once
	reapOnce   sync.Once

	lineNo    int // stdout lines read so far
	traceMax  int // the trace cap this process was last told
	timedOut  atomic.Bool
	signalled atomic.Bool // a fault was injected through Store.Signal
	closing   atomic.Bool // the store is closing
}

type lineResult struct {
	line []byte
	err  error
}

// startProcess runs argv with pipes on stdin, stdout and stderr, in its own
// process group.
func startProcess(argv []string, name string, log *slog.Logger) (*process, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, fmt.Errorf("adapter %s: pipes: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("adapter %s: start: %w", name, err)
	}
	// The child holds its own ends now.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{
		name: name, pid: cmd.Process.Pid, cmd: cmd, stdin: inW, out: outR, errR: errR,
		lines: make(chan lineResult), stop: make(chan struct{}), done: make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	go func() {
		p.waitE = cmd.Wait()
		close(p.done)
	}()
	p.readers.Add(2)
	go func() {
		defer p.readers.Done()
		p.readStdout()
	}()
	go func() {
		defer p.readers.Done()
		defer close(p.stderrDone)
		drainStderr(errR, &p.stderr, log, strings.Join(argv, " "), p.pid)
	}()
	return p, nil
}

// readStdout hands every stdout line to lines, then the error that ended
// the stream, until kill stops it.
func (p *process) readStdout() {
	r := bufio.NewReaderSize(p.out, 64<<10)
	for {
		line, err := readLine(r)
		select {
		case p.lines <- lineResult{line, err}:
		case <-p.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its newline, at most wire.MaxLine long.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case len(line) > wire.MaxLine:
			return nil, fmt.Errorf("a line longer than %d bytes", wire.MaxLine)
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, fmt.Errorf("stdout ended inside a line: %s", quote(line))
		case errors.Is(err, io.EOF):
			return nil, errClosedStdout
		default:
			return nil, fmt.Errorf("read stdout: %w", err)
		}
	}
}

var errClosedStdout = errors.New("the adapter closed its stdout")

// kill kills the process group and stops every wait on the process. It
// does not reap; reap does.
func (p *process) kill() {
	p.killOnce.Do(func() {
		close(p.stop)
		select {
		case <-p.done:
		default:
			_ = signalGroup(p.pid, syscall.SIGKILL)
		}
		p.stdin.Close()
	})
}

// reap waits up to grace for the process to exit on its own, kills its
// group, and releases the pipes once every reader is done. It returns how
// the process ended.
func (p *process) reap(grace time.Duration) error {
	p.reapOnce.Do(func() {
		select {
		case <-p.done:
		case <-time.After(grace):
		}
		p.kill()
		// Anything the adapter left in its group goes too.
		_ = signalGroup(p.pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		p.out.Close()
		p.errR.Close()
		p.readers.Wait()
	})
	select {
	case <-p.done:
		return p.waitE
	default:
		return fmt.Errorf("adapter %s: pid %d did not exit after SIGKILL", p.name, p.pid)
	}
}

// exited reports whether the process has exited and been waited for.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stopped reports whether kill ran.
func (p *process) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// quote shows a line in an error: quoted, and cut short if long.
func quote(line []byte) string {
	const max = 200
	if len(line) > max {
		return fmt.Sprintf("%q…", line[:max])
	}
	return fmt.Sprintf("%q", line)
}
