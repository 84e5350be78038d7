package procfault

import (
	"errors"
	"fmt"
)

// Guarantees the crash-recovery checks can find broken. Every error they
// return wraps exactly one, so that errors.Is tells which check fired; the
// sentinel's text is the guarantee's name and starts the message.
var (
	// ErrIntegrity: the database file is damaged after a crash (PRAGMA
	// integrity_check is not "ok") or cannot be opened again.
	ErrIntegrity = errors.New("integrity")
	// ErrDurability: an acknowledged commit, or one of its side-writes, is
	// missing after a crash, or the recovered tables are not the state the
	// acknowledged commits (and possibly the one in flight) leave.
	ErrDurability = errors.New("durability")
	// ErrAtomicity: the commit in flight at the crash left part of itself:
	// its version advanced without all of its side-writes, or some of its
	// side-writes exist although its version did not advance.
	ErrAtomicity = errors.New("atomicity")
	// ErrIsolation: a commit of one process succeeded entirely inside the
	// window in which another process was stopped holding the write lock.
	ErrIsolation = errors.New("isolation")
)

// ErrNotRun marks a run that could not start or could not be driven to its
// end: the backend cannot be opened, a worker cannot be started, the fault
// was never injected. It says nothing about the store.
var ErrNotRun = errors.New("not run")

// Guarantee names the guarantee err reports broken, or "" when none.
func Guarantee(err error) string {
	for _, g := range []error{ErrIntegrity, ErrDurability, ErrAtomicity, ErrIsolation} {
		if errors.Is(err, g) {
			return g.Error()
		}
	}
	return ""
}

// broke returns a violation of guarantee g, described by format and args.
func broke(g error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", g, fmt.Sprintf(format, args...))
}

// notRun returns a harness error that says why the run did not happen.
func notRun(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotRun, fmt.Sprintf(format, args...))
}
