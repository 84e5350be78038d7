package workload

import (
	"sync"
	"time"
)

// inflight is the processed event of the commit each execution has in
// flight now, shared by the clients of one process. A probe that asks
// load_for_event about it lands while that commit is being applied: a
// store that lets a reader see the commit's new row without its dedupe
// marker (part of a commit) is caught there. Which event a probe asks
// about is, like a read's answer, up to the interleaving; it draws nothing
// from the plan's streams, so the plan stays a pure function of the seed.
type inflight struct {
	mu     sync.Mutex
	events map[string]string // execution → event of a commit in flight
}

func newInflight() *inflight { return &inflight{events: map[string]string{}} }

// begin records that a commit with event is in flight on exec; the
// function it returns ends it.
func (f *inflight) begin(exec, event string) func() {
	f.mu.Lock()
	f.events[exec] = event
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		if f.events[exec] == event {
			delete(f.events, exec)
		}
		f.mu.Unlock()
	}
}

// event is the event of a commit in flight on exec, or "".
func (f *inflight) event(exec string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events[exec]
}

// awaitPoll is how often await looks again.
const awaitPoll = 50 * time.Microsecond

// await is event, waiting up to d for a commit on exec to be in flight
// when none is: commits take a millisecond or two, so a probe that waits a
// moment lands inside one far more often than one that gives up at once.
func (f *inflight) await(exec string, d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		if e := f.event(exec); e != "" || !time.Now().Before(deadline) {
			return e
		}
		time.Sleep(awaitPoll)
	}
}
