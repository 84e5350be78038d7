package linearizability

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestIDFilterKeepsEveryID: every id added is reported as maybe present
// (a false "no" would leave a seen append unsettled), and most ids never
// added are not (else the filter saves nothing).
func TestIDFilterKeepsEveryID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.SliceOf(rapid.String()).Draw(t, "ids")
		var f idFilter
		for _, id := range ids {
			f.add(id)
		}
		for _, id := range ids {
			if !f.has(id) {
				t.Fatalf("%q was added but the filter says it was not", id)
			}
		}
	})
	var f idFilter
	for i := range 1000 {
		f.add(fmt.Sprintf("s%d-%d#%08x", i%20, i, uint32(i)*2654435761))
	}
	maybe := 0
	for i := 1000; i < 101000; i++ {
		if f.has(fmt.Sprintf("s%d-%d#%08x", i%20, i, uint32(i)*2654435761)) {
			maybe++
		}
	}
	if maybe > 5000 { // 1,000 ids set at most 1.5% of the 65,536 bits
		t.Errorf("%d of 100,000 ids never added pass the filter", maybe)
	}
}
