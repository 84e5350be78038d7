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
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/storecheck/storecheck/internal/cli"
	"github.com/storecheck/storecheck/scenarios"
	"github.com/storecheck/storecheck/worker"
)

func main() {
	if _, isWorker := worker.Args(); isWorker || cli.RunsScenarios(os.Args[1:]) {
		gcForScenarios()
	}
	// A worker process a scenario started plays its role and exits.
	worker.Main(scenarios.WorkerRoles())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	endProfile := cpuProfile(os.Getenv("STORECHECK_CPUPROFILE"))
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	endProfile()
	stop()
	os.Exit(code)
}

// gcForScenarios lets the garbage collector run a quarter as often as its
// default (GOGC=400) in a process that runs scenarios: on two cores that
// saved about 7% of an embedded qualification's CPU and 4% of its time,
// for 40–55 MB more resident memory (docs/PERFORMANCE.md). A memory limit of a quarter of the
// machine's memory makes it collect sooner should a long run's history grow
// large. GOGC and GOMEMLIMIT, when set, are left alone.
func gcForScenarios() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if total := memTotal(); total > 0 {
			debug.SetMemoryLimit(total / 4)
		}
	}
}

// memTotal is the machine's memory in bytes, from /proc/meminfo; 0 when
// unknown.
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
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
