// Package procgc sets a process's garbage collector by what the process
// does: one that runs scenarios (storecheck's run, qualify, soak, mutants
// and replay, and every worker process they start) collects less often,
// one that checks a saved history (storecheck check) more often
// (cmd/storecheck, cmd/storecheck-worker).
package procgc

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Profile is what a process does, as far as its collector is concerned.
type Profile int

const (
	// Defaults keeps Go's own settings: a command that lives a moment.
	Defaults Profile = iota
	// Scenarios is a process that runs scenarios (ForScenarios).
	Scenarios
	// Check is a process that checks a saved history (ForCheck).
	Check
)

// Set sets the collector for a process of profile p.
func Set(p Profile) {
	switch p {
	case Scenarios:
		ForScenarios()
	case Check:
		ForCheck()
	}
}

// CheckGCPercent is the collector's GOGC in a process that checks a saved
// history (ForCheck).
const CheckGCPercent = 50

// ForCheck has the collector run twice as often as its default (GOGC=50)
// in a process that checks a saved history, and returns what undoes it. A
// check's live heap is the history and its indexes, and its garbage —
// porcupine's entries of each partition and its search's bitsets — grew
// the default heap to twice that before each collection. On the
// 1,176,754-operation history, six rounds alternating: 1,676–1,930 MiB of
// heap held at the default, 1,386–1,408 MiB at GOGC=50, for a check 8%
// longer (medians 6.95 and 7.54 s); storecheck check's peak resident memory
// 1,896–1,986 MiB before, 1,510–1,517 MiB after (docs/PERFORMANCE.md).
// GOGC, when set, is left alone.
func ForCheck() (undo func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(CheckGCPercent)
	return func() { debug.SetGCPercent(old) }
}

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
