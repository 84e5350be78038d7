package leasestall

import (
	"sync/atomic"
	"time"
)

// logicalClock is the injected clock of goroutine mode: it moves only when
// the workload moves it, so a paused worker's lease expires exactly when
// the fault says.
type logicalClock struct {
	base time.Time
	ns   atomic.Int64
}

// epoch is where logical time starts.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *logicalClock) Now() time.Time { return c.base.Add(time.Duration(c.ns.Load())) }

func (c *logicalClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// AdvanceTo moves the clock to t, unless it is already later.
func (c *logicalClock) AdvanceTo(t time.Time) {
	want := int64(t.Sub(c.base))
	for {
		cur := c.ns.Load()
		if cur >= want || c.ns.CompareAndSwap(cur, want) {
			return
		}
	}
}
