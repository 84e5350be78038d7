package leases

import (
	"fmt"
	"hash/fnv"

	"github.com/anishathalye/porcupine"

	"github.com/storecheck/storecheck/model/runstore"
)

// state is one run's lease/claim register. It is comparable, so states are
// equal iff ==.
type state struct {
	status  runstore.Status
	version int64
	token   int64
	holder  string
	expires int64
	active  bool
	ckpts   int64
}

// initial is a run as create_run leaves it: queued at version 1, never
// claimed. Every run of a checked history must start so, and be touched
// only by recorded operations.
func initial() state { return state{status: runstore.Queued, version: 1} }

// holds reports whether op's fence holds the lease in s at op.Now.
func (s state) holds(op *Op) bool {
	return s.active && s.holder == op.Worker && s.token == op.Token && s.expires > op.Now
}

// want is the outcome the contract prescribes for a fenced op in s.
func (s state) want(op *Op) Outcome {
	if !s.holds(op) {
		return Stale
	}
	if s.version != op.Expected {
		return Conflict
	}
	switch op.Kind {
	case Commit:
		if s.status != runstore.Running || op.Seq != s.ckpts+1 {
			return Conflict
		}
	case Finish:
		if !runstore.CanTransition(s.status, runstore.Status(op.Target)) {
			return Invalid
		}
	}
	return OK
}

// step applies op to s. An operation with an unknown outcome applies iff it
// would have succeeded (see the linearizability package for why that is as
// strong as "may or may not have taken effect").
func step(s state, op *Op) (bool, state) {
	switch op.Kind {
	case Claim:
		if s.status != runstore.Queued || op.Token != s.token+1 || op.Version != s.version+1 || op.Expires != op.Now+op.Lease {
			return false, s
		}
		s.status, s.version, s.token, s.holder, s.expires, s.active = runstore.Running, op.Version, op.Token, op.Worker, op.Expires, true
		return true, s
	case Requeue:
		if !s.active || s.expires > op.Now || s.status != runstore.Running {
			return false, s
		}
		s.status, s.version, s.active = runstore.Queued, s.version+1, false
		return true, s
	case Renew:
		ok := s.holds(op)
		switch op.Outcome {
		case OK:
			if !ok || op.Expires != op.Now+op.Lease {
				return false, s
			}
		case Indeterminate:
			if !ok {
				return true, s
			}
		default:
			return op.Outcome == Stale && !ok, s
		}
		s.expires = op.Now + op.Lease
		return true, s
	case Commit, Finish:
		want := s.want(op)
		switch {
		case op.Outcome != want && op.Outcome != Indeterminate:
			return false, s
		case want != OK:
			return true, s // rejected, as it had to be: nothing changes
		case op.Outcome == OK && op.Version != s.version+1:
			return false, s
		}
		s.version++
		if op.Kind == Commit {
			s.ckpts++
		} else {
			s.status, s.active = runstore.Status(op.Target), false
		}
		return true, s
	}
	return false, s
}

// newModel is the porcupine model of one run's register; the history given
// to porcupine is already one run's (see Check).
func newModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return initial() },
		Step: func(s, in, _ any) (bool, any) { return step(s.(state), in.(*Op)) },
		Equal: func(a, b any) bool {
			return a.(state) == b.(state)
		},
		Hash: func(s any) uint64 {
			h := fnv.New64a()
			fmt.Fprintf(h, "%+v", s.(state))
			return h.Sum64()
		},
		DescribeOperation: func(in, _ any) string { return in.(*Op).String() },
		DescribeState: func(s any) string {
			st := s.(state)
			return fmt.Sprintf("%s v%d token=%d holder=%s active=%v expires=%d checkpoints=%d",
				st.status, st.version, st.token, st.holder, st.active, st.expires, st.ckpts)
		},
	}
}
