package linearizability

import "testing"

// TestKindsAreValid: the kinds Kinds lists and the kinds valid accepts are
// the same (a kind added to one list and not the other would be refused in
// every history, or listed in no report).
func TestKindsAreValid(t *testing.T) {
	for _, k := range Kinds() {
		if !k.valid() {
			t.Errorf("Kinds lists %q, which valid refuses", k)
		}
	}
	for _, k := range []Kind{"", "Commit", "commit ", "read", "load_for_events"} {
		if k.valid() {
			t.Errorf("valid accepts %q, which Kinds does not list", k)
		}
	}
}
