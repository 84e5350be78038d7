package procfault

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"testing"
)

// WorkerCommand is the hidden subcommand that turns the storecheck binary
// into a worker: `storecheck __worker CONFIG`, CONFIG being the JSON the
// parent wrote. It is not meant to be typed by hand.
const WorkerCommand = "__worker"

// workerEnv marks a process started as a worker, so that a test binary's
// TestMain can tell (see MainIfWorker).
const workerEnv = "STORECHECK_PROCFAULT_WORKER"

// Command is how the parent starts a worker: a program and the arguments
// that come before WorkerCommand and the worker's configuration.
type Command struct {
	Path string
	Args []string
	// Env is added to the parent's environment.
	Env []string
	// OnStart, when set, is called with the pid of every worker started,
	// before anything else happens to it; tests use it to check that no
	// worker outlives a run.
	OnStart func(pid int)
}

// SelfCommand re-executes the running binary as a worker. For the storecheck
// binary that is `storecheck __worker CONFIG`, which the CLI hands to
// RunWorker.
//
// In a test binary (testing.Testing), the arguments start with -test.run=^$:
// a test binary whose TestMain calls MainIfWorker becomes the worker, and one
// that does not runs no test and exits, so that the scenario fails to start
// instead of re-running the tests in a loop.
func SelfCommand() (Command, error) {
	exe, err := os.Executable()
	if err != nil {
		return Command{}, notRun("cannot find the running binary to start workers: %v", err)
	}
	c := Command{Path: exe, Env: []string{workerEnv + "=1"}}
	if testing.Testing() {
		c.Args = []string{"-test.run=^$"}
	}
	return c, nil
}

// args returns the full argument list for a worker with configuration cfg.
func (c Command) args(cfg []byte) []string {
	return append(slices.Clone(c.Args), WorkerCommand, string(cfg))
}

// MainIfWorker runs the worker and exits when this process was started as
// one by SelfCommand; otherwise it returns at once. A test binary whose tests
// run the crash-recovery or writer-stall scenarios calls it first thing in
// TestMain:
//
//	func TestMain(m *testing.M) {
//		procfault.MainIfWorker()
//		os.Exit(m.Run())
//	}
func MainIfWorker() {
	args, ok := WorkerArgs()
	if !ok {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := RunWorker(ctx, args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// WorkerArgs returns this process's arguments from WorkerCommand on, and
// true, when SelfCommand started it as a worker. A TestMain that runs the
// whole command line (the CLI's own tests) uses it instead of MainIfWorker.
func WorkerArgs() ([]string, bool) {
	if os.Getenv(workerEnv) != "1" {
		return nil, false
	}
	i := slices.Index(os.Args, WorkerCommand)
	if i < 0 {
		return nil, false
	}
	return os.Args[i:], true
}

// usage is what RunWorker says when it is started by hand.
func usage() string {
	return fmt.Sprintf("usage: storecheck %s CONFIG (started by the crash-recovery and writer-stall scenarios, not by hand)", WorkerCommand)
}
