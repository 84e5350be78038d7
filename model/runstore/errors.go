package runstore

import "errors"

// The errors of the contract. Backends wrap them with %w and add detail;
// callers and the conformance suite tell them apart with errors.Is or Kind.
var (
	// ErrNotFound: the run, interrupt or cursor named does not exist (the
	// seed's KeyError).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request collides with stored state (the seed's
	// ConflictError): a stale expected_version, an idempotency key reused
	// for a different request, a second active run in a session, an id
	// already taken, a sequence that is not max+1, a decided interrupt.
	ErrConflict = errors.New("conflict")
	// ErrStaleLease: the caller is not the current lease holder, its fencing
	// token is not the current one, or the lease is inactive or expired. It
	// is a conflict too: errors.Is(err, ErrConflict) holds.
	ErrStaleLease = &kindError{msg: "lease fencing token is stale or not owned", parent: ErrConflict}
	// ErrInvalidTransition: the status-transition table forbids the move.
	//
	// Decision: the seed's assert_transition error is not shown; it is its
	// own kind here, not a conflict, because retrying cannot cure it.
	ErrInvalidTransition = errors.New("invalid status transition")
	// ErrInvalidArgument: a request the contract rejects before touching
	// storage: an empty worker id, a lease of zero length, a negative
	// limit, JSON of the wrong shape (the seed's ValueError).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotApplied marks a failed write that provably changed nothing (the
	// transaction never began or was rolled back). Any other failure that
	// is none of the above has an unknown outcome.
	ErrNotApplied = errors.New("write not applied")
)

// kindError is a sentinel that is also another sentinel.
type kindError struct {
	msg    string
	parent error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.parent }

// Kind names the contract error err is, most specific first: "stale_lease",
// "conflict", "not_found", "invalid_transition", "invalid_argument"; "" for
// nil and "other" for anything else (an outcome the contract does not name).
func Kind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrStaleLease):
		return "stale_lease"
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrInvalidTransition):
		return "invalid_transition"
	case errors.Is(err, ErrInvalidArgument):
		return "invalid_argument"
	}
	return "other"
}
