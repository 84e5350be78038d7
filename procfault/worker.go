package procfault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Worker modes.
const (
	modeCrash  = "crash"  // report the recovered tables, then commit until killed
	modeVerify = "verify" // report the recovered tables and exit
	modeStall  = "stall"  // run a recorded workload, stall once when told
)

// workerConfig is what the parent tells a worker, as the JSON argument after
// WorkerCommand.
type workerConfig struct {
	Mode string `json:"mode"`
	URL  string `json:"url"`
	Seed uint64 `json:"seed"`
	// LifeMS bounds the worker's life: it exits by itself after this long,
	// should the parent never kill it.
	LifeMS int64 `json:"life_ms"`
	// Synchronous overrides the backend's PRAGMA synchronous; "" keeps it.
	Synchronous string `json:"synchronous,omitempty"`

	// Crash mode. Cycle names the worker's tokens; Reset empties the tables
	// first (the first cycle); HoldAt, when set, makes the BeforeCommit hook
	// of that commit wait to be killed; MaxCommits bounds the commits.
	// RaceAt, when set, makes the hook of that commit wait for the parent's
	// "go", which the parent sends just before it times its kill.
	Cycle      int  `json:"cycle,omitempty"`
	Reset      bool `json:"reset,omitempty"`
	HoldAt     int  `json:"hold_at,omitempty"`
	RaceAt     int  `json:"race_at,omitempty"`
	MaxCommits int  `json:"max_commits,omitempty"`

	// Stall mode: the parent's base time on the wall clock; this worker's
	// clients and the workload's shape; the worker's busy timeout and
	// per-operation timeout; StallAt, when set, the commit (counted across
	// the worker's clients) whose BeforeCommit hook announces the held
	// write lock and waits for "release".
	BaseWallNS    int64 `json:"base_wall_ns,omitempty"`
	FirstClient   int   `json:"first_client,omitempty"`
	Clients       int   `json:"clients,omitempty"`
	Executions    int   `json:"executions,omitempty"`
	DurationMS    int64 `json:"duration_ms,omitempty"`
	OpTimeoutMS   int64 `json:"op_timeout_ms,omitempty"`
	BusyTimeoutMS int64 `json:"busy_timeout_ms,omitempty"`
	StallAt       int   `json:"stall_at,omitempty"`
}

// eventsFD is the file descriptor of the pipe to the parent in a worker:
// the first of exec.Cmd.ExtraFiles.
const eventsFD = 3

// RunWorker is the worker: args is the one JSON configuration the parent
// passed. It reports to the parent on file descriptor 3 and returns the
// process's exit code; stderr gets a line when it cannot report there.
func RunWorker(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, usage())
		return 2
	}
	var cfg workerConfig
	if err := json.Unmarshal([]byte(args[0]), &cfg); err != nil {
		fmt.Fprintf(stderr, "storecheck %s: bad configuration: %v\n%s\n", WorkerCommand, err, usage())
		return 2
	}
	out := os.NewFile(eventsFD, "procfault-events")
	if info, err := out.Stat(); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		fmt.Fprintf(stderr, "storecheck %s: file descriptor %d is not a pipe to a parent\n%s\n", WorkerCommand, eventsFD, usage())
		return 2
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.LifeMS)*time.Millisecond)
	defer cancel()
	em := &emitter{w: out}
	var err error
	switch cfg.Mode {
	case modeCrash, modeVerify:
		err = runCrashWorker(ctx, cfg, em, os.Stdin)
	case modeStall:
		err = runStallWorker(ctx, cfg, em, os.Stdin)
	default:
		err = fmt.Errorf("unknown mode %q", cfg.Mode)
	}
	if err != nil && !errors.Is(err, errParentGone) {
		fmt.Fprintf(stderr, "storecheck %s: %v\n", WorkerCommand, err)
		return 1
	}
	return 0
}

// errParentGone: the pipe to the parent is closed; nobody is listening.
var errParentGone = errors.New("the parent stopped listening")

// emitter writes protocol lines, one write(2) each.
type emitter struct {
	mu sync.Mutex
	w  io.Writer
}

// send writes m as one line.
func (e *emitter) send(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s message: %w", m.Type, err)
	}
	b = append(b, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.w.Write(b); err != nil {
		return fmt.Errorf("%w: %v", errParentGone, err)
	}
	return nil
}

// fail reports that the worker cannot go on at stage, and returns err.
func (e *emitter) fail(stage string, err error) error {
	_ = e.send(message{Type: msgError, Stage: stage, Error: err.Error()})
	return fmt.Errorf("%s: %w", stage, err)
}
