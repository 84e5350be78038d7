// Package wait holds the one way storecheck's loops pause: for a while, or
// less when their context ends.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or less if ctx ends first; it reports whether ctx is still
// live.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
