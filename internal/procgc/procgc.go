// Package procgc sets the garbage collector of a process that runs
// scenarios: storecheck's run, qualify, soak, mutants and replay, and every
// worker process they start (cmd/storecheck, cmd/storecheck-worker).
package procgc

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// ForScenarios lets the garbage collector run a quarter as often as its
// default (GOGC=400) in a process that runs scenarios: on two cores that
// saved about 7% of an embedded qualification's CPU and 4% of its time,
// for 40–55 MB more resident memory (docs/PERFORMANCE.md). A memory limit of a quarter of the
// machine's memory makes it collect sooner should a long run's history grow
// large. GOGC and GOMEMLIMIT, when set, are left alone.
func ForScenarios() {
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
