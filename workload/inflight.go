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
	ended  map[string][]ended  // execution → the last commits acknowledged, oldest first
	acks   uint64              // acknowledgements recorded so far
}

// ended is an acknowledged commit's event, its client, and its place in
// the order acknowledgements were recorded in.
type ended struct {
	event  string
	client int
	seq    uint64
}

// keepEnded bounds the acknowledged commits kept per execution.
const keepEnded = 8

func newInflight() *inflight {
	return &inflight{events: map[string][]string{}, ended: map[string][]ended{}}
}

// begin records that a commit of client with event is in flight on exec;
// the function it returns ends it, saying whether it was acknowledged.
func (f *inflight) begin(exec, event string, client int) func(acked bool) {
	f.mu.Lock()
	f.events[exec] = append(f.events[exec], event)
	f.mu.Unlock()
	return func(acked bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if acked {
			f.acks++
			f.ended[exec] = append(f.ended[exec], ended{event, client, f.acks})
			if n := len(f.ended[exec]); n > keepEnded {
				f.ended[exec] = f.ended[exec][n-keepEnded:]
			}
		}
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

// last is the event of the commit last acknowledged on exec of a client
// other than client, after the after-th acknowledgement; "" when none.
func (f *inflight) last(exec string, client int, after uint64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs := f.ended[exec]
	for i := len(evs) - 1; i >= 0 && evs[i].seq > after; i-- {
		if evs[i].client != client {
			return evs[i].event
		}
	}
	return ""
}

// awaitAcked is the event of the next commit on exec that a client other
// than client has acknowledged, waiting up to d for one; when none comes,
// the last such one before, or "". A probe of it reaches a reader that has
// not synced since (a replica on a schedule) before that reader can hold
// it.
func (f *inflight) awaitAcked(exec string, client int, d time.Duration) string {
	f.mu.Lock()
	from := f.acks
	f.mu.Unlock()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if e := f.last(exec, client, from); e != "" {
			return e
		}
		time.Sleep(awaitPoll)
	}
	return f.last(exec, client, 0)
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
