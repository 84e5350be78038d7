// Command storecheck proves durable execution stores keep their contract:
// property-based sequences against a reference model, linearizability of
// concurrent histories, fault injection, and qualification reports.
//
// Run 'storecheck help' for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/storecheck/storecheck/internal/cli"
	"github.com/storecheck/storecheck/internal/procgc"
	"github.com/storecheck/storecheck/internal/workers"
	"github.com/storecheck/storecheck/worker"
)

func main() {
	if _, isWorker := worker.Args(); isWorker {
		procgc.Set(procgc.Scenarios)
	} else {
		procgc.Set(cli.GCProfile(os.Args[1:]))
	}
	// A worker process a scenario started plays its role and exits.
	worker.Main(workers.Roles())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	endProfile := cpuProfile(os.Getenv("STORECHECK_CPUPROFILE"))
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	endProfile()
	stop()
	os.Exit(code)
}

// cpuProfile writes a CPU profile of this process (not of the worker
// processes it starts) to path, when path is set, for docs/PERFORMANCE.md:
// STORECHECK_CPUPROFILE=cpu.prof storecheck qualify; go tool pprof -top cpu.prof.
func cpuProfile(path string) (end func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "storecheck: STORECHECK_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
