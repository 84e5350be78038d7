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
	events map[string][]string // execution → events of the commits in flight, oldest first
	ended  map[string]string   // execution → event of the commit that ended last
}

func newInflight() *inflight {
	return &inflight{events: map[string][]string{}, ended: map[string]string{}}
}

// begin records that a commit with event is in flight on exec; the
// function it returns ends it.
func (f *inflight) begin(exec, event string) func() {
	f.mu.Lock()
	f.events[exec] = append(f.events[exec], event)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ended[exec] = event
		evs := f.events[exec]
		for i, e := range evs {
			if e == event {
				f.events[exec] = append(evs[:i:i], evs[i+1:]...)
				break
			}
		}
		if len(f.events[exec]) == 0 {
			delete(f.events, exec)
		}
	}
}

// event is the event of the oldest commit in flight on exec, or "". The
// oldest is the one most likely to be applying now: under contention the
// newer ones are still waiting for the store (its lock, its CAS).
func (f *inflight) event(exec string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if evs := f.events[exec]; len(evs) > 0 {
		return evs[0]
	}
	return ""
}

// last is the event of the commit that ended last on exec, however it
// ended, or "".
func (f *inflight) last(exec string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended[exec]
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
