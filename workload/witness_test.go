package workload

import (
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestTraceEntriesAreCanonical: the trace entries the workload writes are
// canonical JSON as written, so that identifying each entry of a trace
// read hashes it where it lies instead of decoding and re-encoding it.
func TestTraceEntriesAreCanonical(t *testing.T) {
	for _, kind := range []string{"commit", "append"} {
		entry := traceEntry("c3-17", kind)
		canon, err := model.CanonicalJSON(entry)
		if err != nil {
			t.Fatal(err)
		}
		if canon != string(entry) {
			t.Errorf("trace entry %s is not canonical; its canonical form is %s", entry, canon)
		}
	}
}
