package linearizability

import (
	"github.com/anishathalye/porcupine"
)

// Each execution is checked as two porcupine partitions:
//
//   - its register: commit, save, load, load_for_event, is_processed, over
//     the state (exists, version, data, processed event ids);
//   - its trace ring: append_trace, read_trace, and every commit or save that
//     carries a trace step and won or may have won.
//
// A commit with a trace step is in both. Checking them apart is sound (a
// linearizable history projects to linearizable partitions) but does not tie
// a commit's trace step to its CAS; the global checks do that from the final
// ring (global.go).
//
// Indeterminate writes. An indeterminate operation returns at EndOfHistory,
// so porcupine may place it anywhere after its call. Its Step is
// deterministic: a commit applies when its CAS condition holds and leaves the
// state alone otherwise; a trace append always appends. That is as strong as
// the nondeterministic "may or may not take effect": if the write took effect
// at some point p, its CAS held at p (in a correct store), and placing it at p
// applies it exactly as happened; if it never took effect, placing it last
// (after every operation with a finite return) makes its effect, if any,
// unobservable, because only other indeterminate operations come after it and
// they accept any state. Conversely, in any linearization the
// nondeterministic model accepts, the writes that did nothing can be moved
// to the end (nothing has to follow an operation that never returns). So a
// history is accepted with this Step iff it is accepted with the
// nondeterministic one, without the cost of sets of states. Before the
// search, the witnesses settle most indeterminate operations (resolve.go).

// part says which partition of an execution an operation is checked in.
type part uint8

const (
	partRegister part = iota
	partTrace
)

func (p part) String() string {
	if p == partTrace {
		return "trace"
	}
	return "register"
}

// input is what porcupine's Input holds: the operation and the partition it
// is being checked in.
type input struct {
	op   *Operation
	part part
	// maxAnon, for a read_trace, bounds how many anonymous appends (see
	// resolve.go) may have taken effect before it.
	maxAnon int64
}

// strNode is a persistent list of strings, newest first; states share tails.
// h caches strHash(val).
type strNode struct {
	val  string
	h    uint64
	next *strNode
}

// state is one partition's model state; a register partition uses the
// first group of fields, a trace partition the second.
type state struct {
	// register
	exists  bool
	version int64
	data    string
	proc    *strNode // processed event ids, a set
	nproc   int
	phash   uint64 // xor of strHash over proc: order-independent

	// trace ring
	next int64    // appends in the partition so far
	ring *strNode // every appended entry id, newest first
	anon int64    // anonymous appends so far: the next index is next+anon
	// lastVer is the version the last acknowledged commit appended at: a
	// commit's trace step is written in its CAS transaction, so the steps
	// of a correct store's acknowledged commits follow their versions.
	lastVer int64
}

// newModel returns the porcupine model for a store whose trace ring holds at
// most traceMax entries (0: unbounded).
func newModel(traceMax int) porcupine.Model {
	return porcupine.Model{
		Partition: partitionPorcupine,
		Init:      func() any { return state{} },
		Step: func(s, in, _ any) (bool, any) {
			i := in.(*input)
			if i.part == partTrace {
				return stepTrace(s.(state), i, traceMax)
			}
			return stepRegister(s.(state), i.op)
		},
		Equal:                     func(a, b any) bool { return equalStates(a.(state), b.(state), traceMax) },
		Hash:                      func(s any) uint64 { return hashState(s.(state)) },
		DescribeOperation:         func(in, _ any) string { return describeOperation(in.(*input).op) },
		DescribeState:             func(s any) string { return describeState(s.(state)) },
		DescribeOperationMetadata: func(any) string { return "" },
	}
}

// casHolds reports whether a commit from expected would win in s.
func (s state) casHolds(expected int64) bool {
	return (s.exists && s.version == expected) || (!s.exists && expected == 0)
}

// applyCommit returns s after op's commit won.
func (s state) applyCommit(op *Operation) state {
	s.exists, s.version, s.data = true, op.Input.Expected+1, op.Input.Data
	if id := op.Input.EventID; id != "" && !s.processed(id) {
		s.proc = &strNode{val: id, next: s.proc}
		s.nproc++
		s.phash ^= strHash(id)
	}
	return s
}

func (s state) processed(id string) bool {
	for n := s.proc; n != nil; n = n.next {
		if n.val == id {
			return true
		}
	}
	return false
}

// stepRegister is the versioned CAS register with its dedupe ledger.
func stepRegister(s state, op *Operation) (bool, any) {
	out := &op.Output
	switch op.Kind {
	case KindCommit, KindSave:
		holds := s.casHolds(op.Input.Expected)
		switch out.Outcome {
		case OutcomeOK:
			if !holds {
				return false, s
			}
			return true, s.applyCommit(op)
		case OutcomeConflict:
			if holds || (out.Found == nil) != !s.exists || (out.Found != nil && *out.Found != s.version) {
				return false, s
			}
			return true, s
		default: // OutcomeIndeterminate: see the comment at the top of the file.
			if holds {
				return true, s.applyCommit(op)
			}
			return true, s
		}
	case KindLoad:
		return s.sameRow(out), s
	case KindLoadForEvent:
		if !s.exists {
			// A missing execution gives (none, false), even with a marker.
			return !out.Exists && !out.Processed, s
		}
		return s.sameRow(out) && out.Processed == s.processed(op.Input.EventID), s
	case KindIsProcessed:
		return out.Processed == s.processed(op.Input.EventID), s
	}
	return false, s
}

// sameRow reports whether a read saw the row s holds.
func (s state) sameRow(out *Output) bool {
	if out.Exists != s.exists {
		return false
	}
	return !s.exists || (out.Version == s.version && out.Data == s.data)
}

// stepTrace is the trace ring: an append (standalone, or a commit's trace
// step) takes the next index; read_trace returns the newest
// min(count, traceMax) entries with contiguous indices ending at count-1.
// Anonymous appends (resolve.go) are never visible, only counted: a read
// fixes how many preceded it, which may only grow and stays within the
// read's bound; the entries it shows are all appends of the partition.
func stepTrace(s state, in *input, traceMax int) (bool, any) {
	op := in.op
	if op.Kind != KindReadTrace {
		if op.Kind.IsCommit() && op.Output.Outcome == OutcomeOK {
			// Acknowledged commits append in version order: without this
			// the search tries every order of the commits between two
			// reads, which with few reads (a replica run's reads are not
			// in the partition) took porcupine past 5 minutes.
			v := op.Input.Expected + 1
			if v <= s.lastVer {
				return false, s
			}
			s.lastVer = v
		}
		s.ring = &strNode{val: op.Input.Trace, h: strHash(op.Input.Trace), next: s.ring}
		s.next++
		return true, s
	}
	items := op.Output.Trace
	count := int64(0)
	if len(items) > 0 {
		count = items[len(items)-1].Index + 1
	}
	anon := count - s.next
	if anon < s.anon || anon > in.maxAnon {
		return false, s
	}
	want := count
	if traceMax > 0 && want > int64(traceMax) {
		want = int64(traceMax)
	}
	if int64(len(items)) != want || want > s.next {
		return false, s
	}
	n := s.ring
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Index != count-int64(len(items)-i) || items[i].Entry != n.val {
			return false, s
		}
		n = n.next
	}
	s.anon = anon
	return true, s
}

// hashState hashes the register and the newest few ring entries. Equal
// states have equal hashes: they agree on the register and on the newest
// min(next, traceMax) entries, which include these.
func hashState(s state) uint64 {
	h := mix(uint64(s.version), s.phash)
	if s.exists {
		h = mix(h, 1)
	}
	h = mix(h, strHash(s.data))
	h = mix(h, uint64(s.nproc))
	h = mix(mix(mix(h, uint64(s.next)), uint64(s.anon)), uint64(s.lastVer))
	n := s.ring
	for i := 0; i < 8 && n != nil; i++ {
		h = mix(h, n.h)
		n = n.next
	}
	return h
}

// equalStates compares what a read can observe: the register with its
// ledger, and the ring's count and its newest traceMax entries (all of them
// when unbounded). Entries already trimmed are invisible, and ignoring them
// lets porcupine's cache merge states that differ only there; without that,
// an indeterminate append nobody saw could be placed before every trimmed
// position and the search would grow with each.
func equalStates(a, b state, traceMax int) bool {
	if a.exists != b.exists || a.version != b.version || a.data != b.data ||
		a.nproc != b.nproc || a.phash != b.phash || a.next != b.next || a.anon != b.anon || a.lastVer != b.lastVer {
		return false
	}
	window := a.next
	if traceMax > 0 {
		window = min(window, int64(traceMax))
	}
	return sameSequence(a.ring, b.ring, window) && sameSet(a.proc, b.proc, a.nproc)
}

// sameSequence compares the first n elements of two lists, stopping early
// where they share a tail.
func sameSequence(a, b *strNode, n int64) bool {
	for ; n > 0 && a != b; n-- {
		if a == nil || b == nil || a.val != b.val {
			return false
		}
		a, b = a.next, b.next
	}
	return true
}

// sameSet compares two duplicate-free lists of n elements as sets. Lists
// built in the same order (the common case) compare without allocating.
func sameSet(a, b *strNode, n int) bool {
	if sameSequence(a, b, int64(n)) {
		return true
	}
	seen := make(map[string]bool, n)
	for x := a; x != nil; x = x.next {
		seen[x.val] = true
	}
	for x := b; x != nil; x = x.next {
		if !seen[x.val] {
			return false
		}
	}
	return true
}
