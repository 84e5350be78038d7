package scenarios

import (
	"strings"
	"testing"
	"time"
)

// TestKnobsTakeTheDefaults: every scenario takes storecheck's default knobs
// and a --duration as the README gives it, so that the knob check before
// the runs (Scenario.CheckKnobs) refuses no plan that runs; past the
// workload's bounds it names the knob.
func TestKnobsTakeTheDefaults(t *testing.T) {
	defaults := Params{Seed: 1, Checks: 100, Steps: 30, Clients: 8, Executions: 4, Ops: 2000}
	timed := defaults
	timed.Duration = 96 * time.Second
	for _, s := range All() {
		for _, p := range []Params{defaults, timed} {
			if err := s.CheckKnobs(p); err != nil {
				t.Errorf("%s refuses %+v: %v", s.Name, p, err)
			}
		}
	}
	for _, name := range []string{"concurrent", "leader-kill", "replica-lag-conflict"} {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		p := defaults
		p.Clients = 5000
		if err := s.CheckKnobs(p); err == nil || !strings.Contains(err.Error(), "clients must be 1..") {
			t.Errorf("%s with 5000 clients: %v, want the clients' bound", name, err)
		}
	}
}
