package scenarios

import (
	"strings"
	"testing"

	"github.com/storecheck/storecheck/evidence"
)

// A violation is placed against the faults: before any began, during one,
// after all healed.
func TestFaultContext(t *testing.T) {
	faults := []evidence.Fault{{Fault: "partition", Target: "n2", StartNS: 4e9, EndNS: 9e9}}
	for _, tt := range []struct {
		at   int64
		want string
	}{
		{9e8, "no fault active yet (the first began at 4.00s)"},
		{5e9, "while partition n2 was active (since 4.00s)"},
		{1e10, "no fault active (all healed)"},
		{0, ""},
	} {
		got := faultContext(tt.at, faults)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("at %d: %q, want %q", tt.at, got, tt.want)
		}
	}
	if got := faultContext(1, nil); got != "with no fault injected" {
		t.Errorf("no faults: %q", got)
	}
}
