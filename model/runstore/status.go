package runstore

import "fmt"

// Status is where a run is in its life.
type Status string

// The statuses. Queued, Running, Waiting and NeedsReview are active (a
// session holds at most one active run); the others are terminal.
const (
	Queued      Status = "queued"
	Running     Status = "running"
	Waiting     Status = "waiting"
	NeedsReview Status = "needs_review"
	Completed   Status = "completed"
	Failed      Status = "failed"
	Cancelled   Status = "cancelled"
	TimedOut    Status = "timed_out"
)

// Statuses lists every status, active ones first.
func Statuses() []Status {
	return []Status{Queued, Running, Waiting, NeedsReview, Completed, Failed, Cancelled, TimedOut}
}

// Active reports whether s counts against the one-active-run-per-session
// rule (the seed's partial unique index).
func (s Status) Active() bool {
	switch s {
	case Queued, Running, Waiting, NeedsReview:
		return true
	}
	return false
}

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return len(transitions[s]) == 0 && s.Known() }

// Known reports whether s is one of the statuses above.
func (s Status) Known() bool {
	_, ok := transitions[s]
	return ok
}

// transitions is the status-transition table: from → the targets allowed.
//
// Decision: the seed calls assert_transition(current, target) but does not
// show its table, so this one is chosen. It contains every move the seed's
// own operations make:
//
//	queued       → running            claim_next
//	running      → queued             requeue_expired_leases (and a yielding finish_claim)
//	running      → waiting            create_interrupt
//	waiting      → queued             decide_interrupt
//	waiting      → timed_out          expire_interrupts
//	running      → completed/failed/… finish_claim
//
// and otherwise what a careful store author would expect:
//
//	queued       → running, waiting, cancelled, failed, timed_out
//	running      → queued, waiting, needs_review, completed, failed, cancelled, timed_out
//	waiting      → queued, cancelled, failed, timed_out
//	needs_review → queued, waiting, completed, failed, cancelled
//	completed, failed, cancelled, timed_out → nothing (terminal)
//
// No status moves to itself (a transition is a change), no terminal run comes
// back (so a session's active run can only be a new run), and a run reaches
// running only through claim_next's queued → running, which is what grants a
// lease. queued → waiting lets an approval gate stop a run before it starts;
// needs_review → waiting lets a reviewer ask for input.
var transitions = map[Status][]Status{
	Queued:      {Running, Waiting, Cancelled, Failed, TimedOut},
	Running:     {Queued, Waiting, NeedsReview, Completed, Failed, Cancelled, TimedOut},
	Waiting:     {Queued, Cancelled, Failed, TimedOut},
	NeedsReview: {Queued, Waiting, Completed, Failed, Cancelled},
	Completed:   nil,
	Failed:      nil,
	Cancelled:   nil,
	TimedOut:    nil,
}

// CanTransition reports whether the table allows from → to.
func CanTransition(from, to Status) bool {
	for _, t := range transitions[from] {
		if t == to {
			return true
		}
	}
	return false
}

// AssertTransition returns an ErrInvalidTransition error unless the table
// allows from → to; the seed's assert_transition.
func AssertTransition(from, to Status) error {
	if !to.Known() {
		return fmt.Errorf("%w: unknown status %q", ErrInvalidArgument, to)
	}
	if !CanTransition(from, to) {
		return fmt.Errorf("%w: %s → %s", ErrInvalidTransition, from, to)
	}
	return nil
}
