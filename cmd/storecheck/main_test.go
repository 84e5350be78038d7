package main

import "testing"

// TestRunsScenarios: the commands that run scenarios get the garbage
// collector tuned for them; check, diff and the rest keep Go's defaults
// (the million-operation check's memory is measured with them).
func TestRunsScenarios(t *testing.T) {
	for args, want := range map[string]bool{
		"qualify": true, "run": true, "soak": true, "mutants": true, "replay": true,
		"check": false, "diff": false, "merge": false, "help": false, "": false,
	} {
		var a []string
		if args != "" {
			a = []string{args, "--seed", "1"}
		}
		if got := runsScenarios(a); got != want {
			t.Errorf("runsScenarios(%q) = %v; want %v", a, got, want)
		}
	}
}
