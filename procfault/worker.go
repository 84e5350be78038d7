package procfault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/worker"
)

// Worker modes.
const (
	modeCrash  = "crash"  // report the recovered tables, then commit until killed
	modeVerify = "verify" // report the recovered tables and exit
	modeStall  = "stall"  // run a recorded workload, stall once when told
	// modeRuns: a run store's power-loss worker: report the recovered
	// tables, then run store ops until killed (Reset unused, MaxCommits
	// bounds the ops); with modeVerify's meaning when Verify is set.
	modeRuns = "runs"
)

// workerConfig is what the parent tells a worker: its configuration line.
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
	// Verify, in run-store mode: report the recovered tables and exit.
	Verify bool `json:"verify,omitempty"`

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

// runWorker is the worker: it opens the store the configuration names and
// does what its mode says, reporting through c. Its life is bounded by
// cfg.LifeMS, should the parent never kill it.
func runWorker(ctx context.Context, cfg workerConfig, c *worker.Child) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.LifeMS)*time.Millisecond)
	defer cancel()
	em := &emitter{c: c}
	var err error
	switch cfg.Mode {
	case modeCrash, modeVerify:
		err = runCrashWorker(ctx, cfg, em, newInbox(c))
	case modeStall:
		err = runStallWorker(ctx, cfg, em, newInbox(c))
	case modeRuns:
		err = runRunsWorker(ctx, cfg, em)
	default:
		err = usage(fmt.Errorf("unknown mode %q", cfg.Mode))
	}
	if errors.Is(err, errParentGone) {
		return nil
	}
	return err
}

// errParentGone: the pipe to the parent is closed; nobody is listening.
var errParentGone = worker.ErrParentGone

// emitter sends protocol messages, one line each.
type emitter struct{ c *worker.Child }

// send writes m as one line.
func (e *emitter) send(m message) error { return e.c.Send(m) }

// sendBody writes m as one line and body after it (worker.Child.SendBody).
func (e *emitter) sendBody(m message, body []byte) error { return e.c.SendBody(m, body) }

// fail reports that the worker cannot go on at stage, and returns err.
func (e *emitter) fail(stage string, err error) error {
	_ = e.send(message{Type: msgError, Stage: stage, Error: err.Error()})
	return fmt.Errorf("%s: %w", stage, err)
}
