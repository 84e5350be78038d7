package linearizability

import (
	"errors"
	"fmt"
)

// Guarantees a check can find broken. Every violation a Report lists wraps
// exactly one of them, so that callers can tell with errors.Is which check
// fired; the sentinel's text is the guarantee's name and starts the message.
var (
	// ErrLinearizability: no linearization of one execution's register
	// operations (commit, save, load, load_for_event, is_processed) exists;
	// typically a stale read or two commits won from one version.
	ErrLinearizability = errors.New("linearizability")
	// ErrTraceRing: read_trace results admit no linearization, or the final
	// ring breaks ascending, contiguous, capped or version-ordered indices.
	ErrTraceRing = errors.New("trace ring")
	// ErrLostUpdate: an acknowledged commit is not among the winners, or the
	// winners do not form one chain up to the final version.
	ErrLostUpdate = errors.New("lost update")
	// ErrAtomicity: a commit's side-writes exist although its CAS lost, or
	// are missing although it won; or one read showed part of a commit (a
	// queue or due_timers read listing some of its rows and not others).
	ErrAtomicity = errors.New("atomicity")
	// ErrEffectOnce: a dedupe marker of a winning commit is missing, or one
	// that was seen disappeared.
	ErrEffectOnce = errors.New("effect-once")
	// ErrDuplicateDelivery: one emit or spawn is pending twice, under two
	// seqs, or again after it was acknowledged.
	ErrDuplicateDelivery = errors.New("duplicate delivery")
	// ErrLostDelivery: a pending emit or spawn vanished before it was
	// acknowledged.
	ErrLostDelivery = errors.New("lost delivery")
	// ErrStaleRead: a queue or due_timers read missed an entry (a timer)
	// that was pending (scheduled and due) before it was called and is
	// still there after, or showed one acknowledged (cancelled, deleted)
	// before it was called that the final tables no longer hold: the read
	// was served from an old state, and nothing was lost or delivered
	// twice. Also: a load, load_for_event or is_processed of the primary
	// showed an execution before a commit, or its event unprocessed, when a
	// read of another table that returned before it was called had listed
	// a row of that commit (observations.go).
	ErrStaleRead = errors.New("stale read")
	// ErrDeliveryOrder: seqs not ascending, reused, or out of version order
	// across the commits of one execution; or a due_timers read not
	// soonest first (fire_at decreasing; equal fire_at in any order).
	ErrDeliveryOrder = errors.New("delivery order")
	// ErrPhantom: a stored row matches no attempt in the history.
	ErrPhantom = errors.New("phantom write")
	// ErrTimers: a timer does not hold what the last winning op on its
	// (execution, path) left, or a stale sweep deleted a re-armed timer; or
	// a due_timers(now) read lists a timer twice or one not due (fire_at >
	// now), misses a due timer scheduled before it was called (and not
	// seen again), or lists one cancelled or deleted before it was called
	// that is still there at the end (or whose end is unknown).
	ErrTimers = errors.New("timers")
	// ErrReplicaRead: a read served by a replica showed a version the
	// primary never committed (or had not begun to), went back behind what
	// the same replica showed before, or, with read-your-writes, missed
	// the replica's own acknowledged write (replica.go).
	ErrReplicaRead = errors.New("replica read")
	// ErrReplicaConvergence: after the final heal and sync, a replica does
	// not show what the primary holds.
	ErrReplicaConvergence = errors.New("replica convergence")
)

// AllGuarantees returns the guarantee sentinels in the order reports name
// them.
func AllGuarantees() []error {
	return []error{
		ErrLostUpdate, ErrLinearizability, ErrAtomicity, ErrEffectOnce, ErrDuplicateDelivery,
		ErrLostDelivery, ErrStaleRead, ErrDeliveryOrder, ErrPhantom, ErrTimers, ErrTraceRing,
		ErrReplicaRead, ErrReplicaConvergence,
	}
}

// Harness errors: the history or its use is wrong, not the store.
var (
	// ErrNotRecorded marks a Client call refused before it reached the
	// store: nothing was recorded and the store was not called.
	ErrNotRecorded = errors.New("operation not recorded")
	// ErrOverlap (which also wraps ErrNotRecorded) is returned by a Client
	// asked to start an operation while another of its operations is in
	// flight.
	ErrOverlap = errors.New("overlapping operations on one client")
	// ErrMalformed marks a history that breaks the recorder's assumptions
	// (bad JSON line, unknown kind, overlapping client, reused witness).
	ErrMalformed = errors.New("malformed history")
)

// Violation is one broken guarantee: which one, on which execution (if any),
// and what happened, in words.
type Violation struct {
	Guarantee error
	Execution string
	Msg       string
	// AtNS, when set, is when the operation that shows the violation was
	// called (from the start of the run): the stale read.
	AtNS int64
}

func (v *Violation) Error() string { return fmt.Sprintf("%v: %s", v.Guarantee, v.Msg) }

// Unwrap returns the guarantee, so that errors.Is(v, ErrAtomicity) works.
func (v *Violation) Unwrap() error { return v.Guarantee }

// Guarantees returns the names of the guarantees err reports broken, in a
// fixed order.
func Guarantees(err error) []string {
	var out []string
	for _, g := range AllGuarantees() {
		if errors.Is(err, g) {
			out = append(out, g.Error())
		}
	}
	return out
}
