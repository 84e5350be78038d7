package linearizability

import (
	"time"

	"github.com/storecheck/storecheck/model"
)

// NewRecorderAt returns a recorder whose timestamps count from base instead
// of from now. Recorders in several processes that record one run against
// one store share a clock this way: each is given a base that stands for the
// same instant (see SharedBase), so their histories can be merged and checked
// together. base should carry a monotonic clock reading (time.Now or a time
// derived from it), and must not be in the future.
func NewRecorderAt(store model.Store, base time.Time) *Recorder {
	return &Recorder{store: store, base: base}
}

// SharedBase returns a time, on this process's monotonic clock, that stands
// for the instant another process on the same host read wallNS
// (time.Now().UnixNano()) from its wall clock: now, moved back by the wall
// time elapsed since then. Only this one reading of the wall clock is used;
// every later timestamp is a monotonic difference. On one host CLOCK_REALTIME
// and CLOCK_MONOTONIC advance at the same (NTP-slewed) rate, so the only
// error is a step of the wall clock between the two readings, which the
// process that chose wallNS can detect by comparing its own wall and
// monotonic elapsed times at the end of the run.
func SharedBase(wallNS int64) time.Time {
	now := time.Now()
	return now.Add(-time.Duration(now.UnixNano() - wallNS))
}
