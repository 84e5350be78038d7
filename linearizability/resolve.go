package linearizability

import (
	"encoding/binary"
	"maps"
	"unsafe"
)

// Indeterminate operations are costly for porcupine: each may be linearized
// anywhere after its call, and k of them pending multiply the search by up to
// 2^k. Like etcd's patchLinearizableOperations, the witnesses settle most of
// them before the search, soundly for a correct store:
//
//   - an indeterminate commit outside its execution's chain of winners never
//     became a version of the row, so it had no effect on the register or
//     (being atomic) on the ring: it is left out;
//   - an indeterminate commit that won version v took effect before any
//     operation observed version v or later (a load or load_for_event
//     returning it, a commit from it, a conflict finding it), so its return
//     can be brought forward to the earliest such return;
//   - an indeterminate append_trace whose entry some read_trace returned took
//     effect before that read returned; one absent from a final ring that
//     was never trimmed never took effect;
//   - any other indeterminate append_trace was never seen: if it took
//     effect, it was trimmed before every read, and all a read can see of it
//     is that the indices moved up by one. Such appends are left out of the
//     partition as "anonymous"; each read_trace carries how many of them were
//     called before it returned, and before the append of the oldest entry
//     it lists returned (an unseen append sits below that entry), and the
//     model lets the count of anonymous appends grow up to that bound
//     (model.go). Porcupine would otherwise try every subset of them at
//     every read.
//
// A store that breaks these assumptions still fails: a read that saw a
// dropped write's data, or an entry a dropped append wrote, matches no write
// left in the partition and cannot be linearized.

// resolution is what porcupine sees of the operations the witnesses settle.
type resolution struct {
	drop map[*Operation]bool
	ret  map[*Operation]int64
	// anon are the unseen indeterminate appends, also left out; maxAnon
	// bounds, per read_trace, how many of them may precede it.
	anon    map[*Operation]bool
	maxAnon map[*Operation]int64
}

// returnOf is op's return time for porcupine.
func (r resolution) returnOf(op *Operation) int64 {
	if t, ok := r.ret[op]; ok {
		return t
	}
	return op.returnTime()
}

func newResolution() resolution {
	return resolution{drop: map[*Operation]bool{}, ret: map[*Operation]int64{}, anon: map[*Operation]bool{}, maxAnon: map[*Operation]int64{}}
}

// merge adds what another part of the settling found (about other
// operations) to r.
func (r resolution) merge(other resolution) {
	maps.Copy(r.drop, other.drop)
	maps.Copy(r.ret, other.ret)
	maps.Copy(r.anon, other.anon)
	maps.Copy(r.maxAnon, other.maxAnon)
}

// resolveCommits settles the indeterminate commits and saves of executions
// whose chain is known. It also brings an acknowledged winner's return
// forward to the first observation of its version or a later one: the
// register partition needs no help there, but the trace partition does,
// where the winner's step must be listed by a read_trace called after a
// load showed its version (an answer showing part of a commit otherwise).
func (g *globalChecker) resolveCommits() resolution {
	res := newResolution()
	g.seen = g.firstObservations()
	for _, exec := range g.execs {
		if !g.chainOK[exec] {
			continue
		}
		seen := g.seen[exec]
		for _, op := range g.byExec[exec] {
			if op.Output.Outcome != OutcomeIndeterminate && op.Output.Outcome != OutcomeOK {
				continue
			}
			v, won := g.winner[op]
			switch {
			case !won && op.Output.Outcome == OutcomeIndeterminate:
				res.drop[op] = true
			case won && v < int64(len(seen)) && seen[v] < op.returnTime():
				res.ret[op] = max(seen[v], op.Call)
			}
		}
	}
	return res
}

// firstObservations returns, per execution, for each version v the earliest
// return of an operation that observed version v or later.
func (g *globalChecker) firstObservations() map[string][]int64 {
	first := map[string][]int64{}
	note := func(exec string, v, at int64) {
		if v < 1 || v > 1<<20 {
			return
		}
		s := first[exec]
		for int64(len(s)) <= v {
			s = append(s, EndOfHistory)
		}
		s[v] = min(s[v], at)
		first[exec] = s
	}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		out := &op.Output
		switch {
		case (op.Kind == KindLoad || op.Kind == KindLoadForEvent) && out.Outcome == OutcomeOK && out.Exists:
			note(op.Execution, out.Version, op.Return)
		case op.Kind.IsCommit() && out.Outcome == OutcomeOK:
			note(op.Execution, op.Input.Expected+1, op.Return)
		case op.Kind.IsCommit() && out.Outcome == OutcomeConflict && out.Found != nil:
			note(op.Execution, *out.Found, op.Return)
		}
	}
	for exec, s := range first {
		for v := len(s) - 2; v >= 0; v-- {
			s[v] = min(s[v], s[v+1])
		}
		first[exec] = s
	}
	return first
}

// resolveAppends settles indeterminate standalone trace appends.
func (g *globalChecker) resolveAppends(res resolution) {
	// The earliest return of a read that listed each indeterminate append,
	// -1 while none has: only those ids are looked for (a history holds
	// millions of listed entries and few indeterminate appends).
	seenAt := map[string]int64{}
	for id, op := range g.traces {
		if op.Kind == KindAppendTrace && op.Output.Outcome == OutcomeIndeterminate {
			seenAt[id] = -1
		}
	}
	if len(seenAt) == 0 {
		return
	}
	var maybe idFilter // most listed entries are not among them: a map lookup only for those that may be
	for id := range seenAt {
		maybe.add(id)
	}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind != KindReadTrace || op.Output.Outcome != OutcomeOK {
			continue
		}
		for _, it := range op.Output.Trace {
			if !maybe.has(it.Entry) {
				continue
			}
			if t, ok := seenAt[it.Entry]; ok && (t < 0 || op.Return < t) {
				seenAt[it.Entry] = op.Return
			}
		}
	}
	for id, op := range g.traces {
		if op.Kind != KindAppendTrace || op.Output.Outcome != OutcomeIndeterminate {
			continue
		}
		if t := seenAt[id]; t >= 0 {
			res.ret[op] = max(t, op.Call)
			continue
		}
		fin := g.final.traces[op.Execution]
		if fin != nil && (len(fin.Output.Trace) == 0 || fin.Output.Trace[0].Index == 0) {
			res.drop[op] = true
		} else {
			res.anon[op] = true
		}
	}
	if len(res.anon) == 0 {
		return
	}
	anonOf := map[string][]*Operation{} // by execution
	for a := range res.anon {
		anonOf[a.Execution] = append(anonOf[a.Execution], a)
	}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind != KindReadTrace || op.Output.Outcome != OutcomeOK {
			continue
		}
		// An unseen append the read counts sits below the oldest entry it
		// lists (the ring is contiguous up to its newest entry, and every
		// entry from there up is listed): it took effect before that
		// entry's append returned, so it was called by then.
		by := op.Return
		if items := op.Output.Trace; len(items) > 0 {
			if w := g.traces[items[0].Entry]; w != nil {
				by = min(by, w.returnTime())
			}
		}
		for _, a := range anonOf[op.Execution] {
			if a.Call <= by {
				res.maxAnon[op]++
			}
		}
	}
}

// idFilter tells, for most strings never added to it, that they were not:
// one bit per value of a cheap hash of a string's length and last eight
// bytes (an id's most varied part). has costs a few instructions where a
// map lookup hashes the whole string and probes memory; a true answer
// still needs the lookup.
type idFilter [1 << filterHashBits / 64]uint64

const filterHashBits = 16

func (f *idFilter) add(s string) {
	h := filterHash(s)
	f[h/64] |= 1 << (h % 64)
}

func (f *idFilter) has(s string) bool {
	h := filterHash(s)
	return f[h/64]&(1<<(h%64)) != 0
}

func filterHash(s string) uint32 { return filterHashBitsOf(s, filterHashBits) }

// wideFilter is an idFilter of 1<<wideHashBits bits (512 KiB), for sets of
// up to a few hundred thousand ids: observations filters every winner's
// trace step with one.
type wideFilter []uint64

const wideHashBits = 22

func newWideFilter() wideFilter { return make(wideFilter, 1<<wideHashBits/64) }

func (f wideFilter) add(s string) {
	h := filterHashBitsOf(s, wideHashBits)
	f[h/64] |= 1 << (h % 64)
}

func (f wideFilter) has(s string) bool {
	h := filterHashBitsOf(s, wideHashBits)
	return f[h/64]&(1<<(h%64)) != 0
}

// filterHashBitsOf is the filters' hash of s, in bits bits.
func filterHashBitsOf(s string, bits uint) uint32 {
	x := uint64(len(s))
	if len(s) >= 8 {
		x ^= binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[len(s)-8:]), 8))
	} else {
		for i := 0; i < len(s); i++ {
			x = x<<8 ^ uint64(s[i])
		}
	}
	return uint32((x * 0x9e3779b97f4a7c15) >> (64 - bits))
}
