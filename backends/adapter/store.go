package adapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/model"
)

// Scheme is the backend URL scheme of adapters: "exec:COMMAND ARG…".
const Scheme = "exec"

// Store is a model.Store answered by adapter processes. Open returns it
// wrapped so that it also implements model.Dumper, model.Resetter and
// model.TraceMaxSetter exactly when the adapter supports them; it always
// implements Faults.
type Store struct {
	name string // the command line, for errors
	argv []string
	opt  Options
	info wire.StoreInfo
	// hello is the first process's answer; later ones must match it.
	hello wire.HelloResult

	ids      atomic.Uint64
	traceMax atomic.Int64
	slots    chan struct{} // one per operation in flight
	avail    chan struct{} // a process became idle, or the pool changed
	// life bounds the processes: it ends with Open's context or Close.
	life        context.Context
	endLife     context.CancelFunc
	stopAbandon func() bool    // unregisters abandon from Open's context
	spawns      sync.WaitGroup // processes being started in the background

	mu       sync.Mutex
	idle     []*process
	live     map[*process]struct{} // started and not yet reaped
	started  int
	spawning int   // background starts under way
	broken   error // the first protocol violation; every later op fails with it
	closed   bool
}

// Faults is implemented by stores opened with exec:, for fault injection:
// the adapter processes now running, and a way to signal one.
type Faults interface {
	// PIDs returns the pids of the adapter processes now running.
	PIDs() []int
	// Signal sends sig to the process group of the adapter process pid. A
	// process signalled this way is not held against the adapter: if it
	// dies, its request in flight fails with an unknown outcome and the
	// next operation starts a new process.
	Signal(pid int, sig os.Signal) error
}

// Validate checks an exec: URL's command line without starting anything.
func Validate(rest string) error {
	argv, err := Split(rest)
	if err != nil {
		return fmt.Errorf("backend exec: %w", err)
	}
	if len(argv) == 0 {
		return fmt.Errorf("backend exec: no command (want exec:COMMAND ARG…, e.g. %q)", "exec:python3 adapters/python/sqlite_store.py")
	}
	for i, arg := range argv[1:] {
		if name, ok := credentialArg(arg, i+2 < len(argv)); ok {
			// The value is not repeated: it may be the secret.
			return fmt.Errorf("backend exec: argument %s looks like a credential: pass it to the adapter in an environment variable; the command line is written into every report", name)
		}
	}
	return nil
}

// credentialWords are the names of an adapter's arguments that carry a
// secret (--token=…, password=…, --api-key …).
var credentialWords = []string{"token", "password", "passwd", "secret", "apikey"}

// credentialArg reports whether arg passes a credential on the command
// line: NAME=VALUE, or a flag -NAME / --NAME with a value after it
// (hasNext), whose NAME ends in a credential word (--auth-token, not
// --token-file); it returns the argument as shown, its value left out.
func credentialArg(arg string, hasNext bool) (string, bool) {
	name, _, hasValue := strings.Cut(arg, "=")
	flagName := strings.TrimLeft(name, "-")
	isFlag := flagName != name
	if !hasValue && !(isFlag && hasNext) {
		return "", false
	}
	norm := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(flagName))
	for _, w := range credentialWords {
		if strings.HasSuffix(norm, w) {
			if hasValue {
				return name + "=…", true
			}
			return name + " …", true
		}
	}
	return "", false
}

// OpenURL opens the store an exec: URL names, with default Options.
func OpenURL(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
	if err := Validate(rest); err != nil {
		return nil, err
	}
	argv, _ := Split(rest)
	return Open(ctx, argv, cfg, Options{})
}

// Open starts the adapter argv, has it answer hello for a new store in a
// new directory, and returns the store. The adapter processes live until
// Close, or until ctx ends, as with exec.CommandContext.
func Open(ctx context.Context, argv []string, cfg model.Config, opt Options) (model.Store, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("backend exec: no command")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{name: displayName(argv), argv: argv, opt: opt, live: map[*process]struct{}{}}
	dir, err := tmpfs.MkdirTemp(opt.Dir, "storecheck-adapter-")
	if err != nil {
		return nil, fmt.Errorf("adapter %s: store directory: %w", s.name, err)
	}
	s.info = wire.StoreInfo{Dir: dir, Name: filepath.Base(dir)}
	s.traceMax.Store(int64(cfg.TraceMax))
	p, err := s.spawn(ctx)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	procs := opt.MaxProcesses
	if m := s.hello.MaxProcesses; m > 0 && m < procs {
		procs = m
	}
	s.slots = make(chan struct{}, procs)
	s.avail = make(chan struct{}, procs)
	s.idle = []*process{p}
	s.life, s.endLife = context.WithCancel(ctx)
	s.stopAbandon = context.AfterFunc(ctx, func() { s.abandon(ctx) })
	return s.withCapabilities(), nil
}

// displayName is the command line as errors show it.
func displayName(argv []string) string {
	return fmt.Sprintf("%q", strings.Join(argv, " "))
}

// abandon kills every process once the context of Open has ended; the
// store fails every later operation.
func (s *Store) abandon(ctx context.Context) {
	s.mu.Lock()
	if s.broken == nil {
		s.broken = fmt.Errorf("adapter %s: the context the store was opened with ended: %w", s.name, ctx.Err())
	}
	procs := s.liveLocked()
	s.mu.Unlock()
	for _, p := range procs {
		p.closing.Store(true)
		p.kill()
	}
	for _, p := range procs {
		_ = p.reap(0)
	}
}

func (s *Store) liveLocked() []*process {
	procs := make([]*process, 0, len(s.live))
	for p := range s.live {
		procs = append(procs, p)
	}
	return procs
}

// Close shuts every idle process down, kills any busy one, reaps them all
// and removes the store's directory. The error says which adapter did not
// exit cleanly.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	idle := map[*process]bool{}
	for _, p := range s.idle {
		idle[p] = true
	}
	s.idle = nil
	s.mu.Unlock()
	s.stopAbandon()
	s.endLife()     // a process still in its hello is killed
	s.spawns.Wait() // and reaped, or added to live
	s.mu.Lock()
	for _, p := range s.idle { // added by a start that finished meanwhile
		idle[p] = true
	}
	s.idle = nil
	procs := s.liveLocked()
	s.mu.Unlock()

	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		graceful := idle[p] && !p.stopped()
		if !graceful {
			p.closing.Store(true)
			p.kill()
		}
		wg.Go(func() {
			if graceful {
				errs[i] = s.shutdown(p)
			} else {
				_ = p.reap(0)
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	clear(s.live)
	s.mu.Unlock()
	if err := os.RemoveAll(s.info.Dir); err != nil {
		errs = append(errs, fmt.Errorf("adapter %s: remove the store directory: %w", s.name, err))
	}
	return errors.Join(errs...)
}

// shutdown asks p to exit, and reaps it.
func (s *Store) shutdown(p *process) error {
	id := s.ids.Add(1)
	line, err := wire.EncodeRequest(id, wire.OpShutdown, nil)
	if err == nil {
		_, err = p.call(context.Background(), id, wire.OpShutdown, line, s.opt.ShutdownTimeout)
	}
	p.stdin.Close()
	lingered := false
	if err == nil {
		select {
		case <-p.done:
		case <-time.After(s.opt.ShutdownTimeout):
			lingered = true
		}
	}
	waitErr := p.reap(0)
	switch {
	case err != nil:
		return fmt.Errorf("adapter %s (pid %d): shutdown: %w", s.name, p.pid, err)
	case lingered:
		// Answered, so the store was closed: a process that does not exit
		// is killed (§4.3) and noted, not held against the store.
		s.opt.Logger.Warn("adapter still running after answering shutdown; killed",
			"adapter", strings.Join(s.argv, " "), "pid", p.pid, "after", s.opt.ShutdownTimeout)
		return nil
	case waitErr != nil:
		return fmt.Errorf("adapter %s (pid %d): after shutdown: %w", s.name, p.pid, waitErr)
	}
	return nil
}

// PIDs implements Faults.
func (s *Store) PIDs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	pids := make([]int, 0, len(s.live))
	for p := range s.live {
		if !p.exited() {
			pids = append(pids, p.pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// Signal implements Faults.
func (s *Store) Signal(pid int, sig os.Signal) error {
	s.mu.Lock()
	var target *process
	for p := range s.live {
		if p.pid == pid {
			target = p
		}
	}
	s.mu.Unlock()
	if target == nil {
		return fmt.Errorf("adapter %s: no adapter process with pid %d", s.name, pid)
	}
	target.signalled.Store(true)
	return signalGroup(pid, sig)
}
