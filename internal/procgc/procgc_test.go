package procgc

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's GOGC (by setting it to what it was).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestForCheckSetsItsPercentAndUndoes(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	undo := ForCheck()
	if got := gcPercent(); got != CheckGCPercent {
		t.Errorf("after ForCheck, GOGC is %d; want %d", got, CheckGCPercent)
	}
	undo()
	if got := gcPercent(); got != 100 {
		t.Errorf("after its undo, GOGC is %d; want 100, as before", got)
	}
}

func TestForCheckLeavesAGivenGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "200")
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	undo := ForCheck()
	defer undo()
	if got := gcPercent(); got != 200 {
		t.Errorf("with GOGC=200 set, ForCheck changed GOGC to %d", got)
	}
}

func TestSetByProfile(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB") // ForScenarios leaves a given limit alone
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for p, want := range map[Profile]int{Defaults: 100, Scenarios: 400, Check: CheckGCPercent} {
		debug.SetGCPercent(100)
		Set(p)
		if got := gcPercent(); got != want {
			t.Errorf("Set(%d): GOGC %d; want %d", p, got, want)
		}
	}
}
