// Package load puts the machine under load while a soak runs, and measures
// the load it got. The load is stress-ng from Debian, in a process group
// of its own that dies with storecheck (Pdeathsig) and ends by itself
// after its own --timeout, so that nothing it starts outlives the soak,
// even when storecheck is killed.
package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec says what load to put on the machine.
type Spec struct {
	// Kind is "none" (measure only) or "stress-ng".
	Kind string
	// CPU is the number of CPU stressors; 0 means one per CPU (as
	// stress-ng's own --cpu 0); negative is refused.
	CPU int
	// IO is the number of stressors that sync the file system (they make
	// fsync slow, which is what durability code races with); 0 means 1;
	// negative is refused.
	IO int
	// Limit bounds stress-ng's life (its own --timeout, in whole seconds,
	// rounded up, plus one): the soak's time budget plus a margin. It must
	// be positive for stress-ng: there is no default to fall back on.
	Limit time.Duration
	// TempDir is where stress-ng's IO stressors write; "" means the
	// system's.
	TempDir string
}

// Kinds are the accepted Spec.Kind values.
var Kinds = []string{"none", "stress-ng"}

// sampleEvery is how often the 1-minute load average is read: often
// enough for a mean over a soak of a few minutes, cheap enough not to be
// load itself.
const sampleEvery = 2 * time.Second

// Load is a running load and its measurement.
type Load struct {
	spec    Spec
	cmd     *exec.Cmd
	desc    string
	started time.Time

	stop    chan struct{}
	done    chan struct{}
	exited  chan struct{} // closed once stress-ng is reaped
	mu      sync.Mutex
	samples []float64
	once    sync.Once
	stats   Stats
	err     error
}

// Stats is what the load was, for the soak's report.
type Stats struct {
	// Load is what was started ("stress-ng --cpu 2 --io 1", or "none").
	Load string `json:"load"`
	// CPUs is the number of CPUs the machine has.
	CPUs int `json:"cpus"`
	// Load1Mean and Load1Max are the 1-minute load average, sampled every
	// two seconds while the load ran.
	Load1Mean float64 `json:"load1_mean"`
	Load1Max  float64 `json:"load1_max"`
	Samples   int     `json:"samples"`
	Seconds   float64 `json:"seconds"`
}

// Check reports what would make Start refuse spec, without starting
// anything: an unknown kind, a negative number of stressors, a limit that
// is not positive, stress-ng not installed.
func (spec Spec) Check() error {
	switch spec.Kind {
	case "", "none":
		return nil
	case "stress-ng":
	default:
		return fmt.Errorf("unknown load %q (want one of %s)", spec.Kind, strings.Join(Kinds, ", "))
	}
	switch {
	case spec.CPU < 0:
		return fmt.Errorf("stress-ng: %d CPU stressors: want 0 (one per CPU) or more", spec.CPU)
	case spec.IO < 0:
		return fmt.Errorf("stress-ng: %d I/O stressors: want 0 (one) or more", spec.IO)
	case spec.Limit <= 0:
		return fmt.Errorf("stress-ng: time limit %v: want a positive one", spec.Limit)
	}
	if _, err := exec.LookPath("stress-ng"); err != nil {
		return errors.New("stress-ng is not installed (Debian: apt-get install stress-ng); use --load none to soak without load")
	}
	return nil
}

// Start starts the load and its measurement. Stop ends both; ctx ending
// stops the load too. A spec Check refuses starts nothing.
func Start(ctx context.Context, spec Spec) (*Load, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	l := &Load{spec: spec, started: time.Now(), stop: make(chan struct{}), done: make(chan struct{}), desc: "none"}
	if spec.Kind == "stress-ng" {
		if err := l.startStress(); err != nil {
			return nil, err
		}
	}
	go l.sample(ctx)
	return l, nil
}

// startStress starts stress-ng as the spec (already checked) says.
func (l *Load) startStress() error {
	bin, err := exec.LookPath("stress-ng")
	if err != nil {
		return fmt.Errorf("stress-ng: %w", err)
	}
	cpu, io := l.spec.CPU, l.spec.IO
	if cpu == 0 {
		cpu = runtime.NumCPU()
	}
	if io == 0 {
		io = 1
	}
	limit := int((l.spec.Limit+time.Second-1)/time.Second) + 1 // whole seconds, rounded up, plus a margin
	args := []string{"--cpu", strconv.Itoa(cpu), "--io", strconv.Itoa(io), "--timeout", strconv.Itoa(limit) + "s", "--quiet"}
	if l.spec.TempDir != "" {
		args = append(args, "--temp-path", l.spec.TempDir)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start stress-ng: %w", err)
	}
	l.cmd = cmd
	l.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait() // killed or timed out: its exit status says nothing
		close(l.exited)
	}()
	l.desc = "stress-ng " + strings.Join(args[:4], " ")
	return nil
}

// sample reads the load average until Stop or ctx ends.
func (l *Load) sample(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			l.kill()
			return
		case <-t.C:
			if v, err := Load1(); err == nil {
				l.mu.Lock()
				l.samples = append(l.samples, v)
				l.mu.Unlock()
			}
		}
	}
}

// kill ends stress-ng and every process it forked (its process group).
func (l *Load) kill() {
	if l.cmd == nil || l.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
}

// Stop ends the load and returns what it was. It is safe to call more
// than once.
func (l *Load) Stop() (Stats, error) {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		// One last reading before the load ends, so that a run shorter
		// than sampleEvery still says what the machine was under.
		if v, err := Load1(); err == nil {
			l.mu.Lock()
			l.samples = append(l.samples, v)
			l.mu.Unlock()
		}
		l.kill()
		if l.cmd != nil {
			<-l.exited
			if leftover := groupAlive(l.cmd.Process.Pid); leftover {
				l.err = fmt.Errorf("stress-ng's process group %d outlived the load", l.cmd.Process.Pid)
			}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		st := Stats{Load: l.desc, CPUs: runtime.NumCPU(), Samples: len(l.samples), Seconds: time.Since(l.started).Seconds()}
		for _, v := range l.samples {
			st.Load1Mean += v / float64(len(l.samples))
			st.Load1Max = max(st.Load1Max, v)
		}
		l.stats = st
	})
	return l.stats, l.err
}

// PID is stress-ng's process id, or 0 without one.
func (l *Load) PID() int {
	if l.cmd == nil || l.cmd.Process == nil {
		return 0
	}
	return l.cmd.Process.Pid
}

// groupAlive reports whether any process of group pgid is still running,
// after a bounded wait for the kernel to reap them.
func groupAlive(pgid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Load1 reads the 1-minute load average.
func Load1() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, fmt.Errorf("read the load average: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("read the load average: /proc/loadavg is empty")
	}
	return strconv.ParseFloat(f[0], 64)
}
