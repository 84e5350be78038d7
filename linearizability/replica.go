package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Reads served by an embedded replica (Operation.Replica) may be stale, so
// porcupine never sees them: a replica's load is not linearizable, and
// nothing here weakens the register model the other reads are held to.
// Instead each replica read is held to what a replica promises, against its
// execution's chain of winners (chain.go):
//
//   - committed: a load or load_for_event shows a version the primary
//     committed (the chain's data at that version) whose commit had been
//     called before the read returned; load_for_event's flag says whether a
//     winner up to that version carries the event; is_processed says true
//     only of an event some winner carries, called before the read
//     returned;
//   - monotonic: a read never shows less than a read of the same replica
//     that returned before it was called;
//   - read-your-writes, when the replica promises it: a read shows at least
//     every version its replica's own commits wrote and acknowledged before
//     it was called;
//   - convergence: after the final heal and sync, a replica's heal loads
//     show exactly the primary's final rows;
//   - prefix states: every read, of any table, shows a state a prefix of
//     the commits produces, never less than the same replica showed before
//     of any table (prefix.go).
//
// Staleness is measured, not judged: a load that shows version v although
// version v+1 had been acknowledged before the load was called is stale by
// the time since that acknowledgement.

// ReplicaStats describes the reads replicas served.
type ReplicaStats struct {
	// Reads counts the replica loads and is_processed reads checked, heal
	// reads excluded; the reads of the other tables are held to the prefix
	// rules (prefix.go) and not counted.
	Reads int
	// Stale lists the loads that missed an acknowledged version, in
	// history order.
	Stale []StaleRead
	// MaxStaleness and MaxBehind are the largest By and Behind of Stale.
	MaxStaleness time.Duration
	MaxBehind    int64
	// Unchecked counts replica reads no rule applies to: a read of one
	// execution whose chain is unknown, a read of a whole table when no
	// execution's chain is known, or a kind with no replica rule.
	Unchecked int
}

// StaleRead is one replica load that missed acknowledged versions.
type StaleRead struct {
	// Op is the load's index in the history.
	Op int
	// Behind is how many versions beyond the one shown had been
	// acknowledged when the load was called.
	Behind int64
	// By is how long the first of them had been acknowledged by then.
	By time.Duration
}

// floorMark is a version a replica is known to hold from a time on.
type floorMark struct {
	at int64 // a read's or an own write's return
	v  int64
}

// floors answers "the highest version marked before t" per replica and
// execution.
type floors struct {
	marks map[[2]string][]floorMark // sorted by at; v is a running max
}

func newFloors() *floors { return &floors{marks: map[[2]string][]floorMark{}} }

func (f *floors) add(replica, exec string, at, v int64) {
	k := [2]string{replica, exec}
	f.marks[k] = append(f.marks[k], floorMark{at, v})
}

// seal sorts every list and turns v into a running maximum.
func (f *floors) seal() {
	for k, ms := range f.marks {
		slices.SortFunc(ms, func(a, b floorMark) int { return cmp.Compare(a.at, b.at) })
		for i := 1; i < len(ms); i++ {
			ms[i].v = max(ms[i].v, ms[i-1].v)
		}
		f.marks[k] = ms
	}
}

// before returns the highest version marked strictly before t, and the
// time of the mark that set it; (0, -1) when none.
func (f *floors) before(replica, exec string, t int64) (int64, int64) {
	ms := f.marks[[2]string{replica, exec}]
	i := sort.Search(len(ms), func(i int) bool { return ms[i].at >= t })
	if i == 0 {
		return 0, -1
	}
	return ms[i-1].v, ms[i-1].at
}

// replicaReads runs the replica rules and fills Report.Replica. It does
// nothing for a history without replica reads.
func (g *globalChecker) replicaReads() {
	var reads []int
	for i := range g.h.Ops {
		if op := &g.h.Ops[i]; op.replicaRead() && op.Output.Outcome == OutcomeOK {
			reads = append(reads, i)
		}
	}
	if len(reads) == 0 {
		return
	}
	st := &ReplicaStats{}
	g.rep.Replica = st
	seen, own := g.replicaFloors(reads)
	anyKnown := slices.ContainsFunc(g.execs, func(exec string) bool { return g.chainOK[exec] })
	for _, i := range reads {
		op := &g.h.Ops[i]
		// A read of one execution needs that execution's chain; a read of
		// a whole table (outbox, spawns, due timers) is held against every
		// known chain, and checks nothing only when none is known.
		if !anyKnown || op.Kind.perExecution() && !g.chainOK[op.Execution] {
			st.Unchecked++
			continue
		}
		switch op.Kind {
		case KindLoad, KindLoadForEvent:
			g.replicaLoad(i, seen, own, st)
		case KindIsProcessed:
			g.replicaProbe(op, seen, own)
		case KindPendingOutbox, KindPendingSpawns, KindDueTimers, KindReadTrace:
			continue // held to the prefix rules (prefix.go) below
		default:
			st.Unchecked++
			continue
		}
		if !op.Heal {
			st.Reads++
		}
	}
	if st.Unchecked > 0 {
		g.rep.Notes = append(g.rep.Notes, fmt.Sprintf("%d replica reads had no replica rule or no known chain and were not checked", st.Unchecked))
	}
	g.replicaPrefixes(reads, own)
	g.replicaConvergence()
}

// replicaFloors marks what each replica showed (its reads) and, with
// read-your-writes, what it wrote (its acknowledged commits).
func (g *globalChecker) replicaFloors(reads []int) (seen, own *floors) {
	seen, own = newFloors(), newFloors()
	for _, i := range reads {
		op := &g.h.Ops[i]
		if v, ok := g.shownVersion(op); ok {
			seen.add(op.Replica, op.Execution, op.Return, v)
		}
	}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Replica != "" && op.ReadYourWrites && op.Kind.IsCommit() && op.Output.Outcome == OutcomeOK {
			own.add(op.Replica, op.Execution, op.Return, op.Input.Expected+1)
		}
	}
	seen.seal()
	own.seal()
	return seen, own
}

// shownVersion is the version a replica read proves its replica held: a
// load's version (0 for none), or, for an is_processed that said true, the
// version of the winner carrying the event.
func (g *globalChecker) shownVersion(op *Operation) (int64, bool) {
	switch op.Kind {
	case KindLoad, KindLoadForEvent:
		if op.Output.Exists {
			return op.Output.Version, true
		}
		return 0, true
	case KindIsProcessed:
		if op.Output.Processed {
			return g.carrier(op.Execution, op.Input.EventID)
		}
	}
	return 0, false
}

// carrier returns the lowest version whose winner carries event. Every
// replica read of a marker asks, so the answers are indexed once, by the
// first to ask (the rows stage's checks run one after another): scanning
// the chain each time made the replica checks quadratic in its length.
func (g *globalChecker) carrier(exec, event string) (int64, bool) {
	if g.carrierAt == nil {
		g.carrierAt = map[procKey]int64{}
		for x, chain := range g.atVer {
			for v := len(chain) - 1; v >= 1; v-- { // down, so the lowest stays
				if w := chain[v]; w != nil {
					g.carrierAt[procKey{x, w.Input.EventID}] = int64(v)
				}
			}
		}
	}
	v, ok := g.carrierAt[procKey{exec, event}]
	return v, ok
}

// replicaLoad holds one replica load or load_for_event to the rules.
func (g *globalChecker) replicaLoad(i int, seen, own *floors, st *ReplicaStats) {
	op := &g.h.Ops[i]
	chain, out := g.atVer[op.Execution], &op.Output
	v := int64(0)
	if out.Exists {
		v = out.Version
		if v < 1 || v >= int64(len(chain)) || chain[v] == nil || chain[v].Input.Data != out.Data {
			g.rep.add(ErrReplicaRead, op.Execution, "%s on %s shows %s at v%d (%s), which the primary never committed",
				opAt(op), op.Replica, op.Execution, v, short(out.Data))
			return
		}
		if w := chain[v]; w.Call > op.Return {
			g.rep.add(ErrReplicaRead, op.Execution, "%s on %s shows v%d of %s, written by %s, called only after the read returned",
				opAt(op), op.Replica, v, op.Execution, name(w))
		}
	}
	if op.Kind == KindLoadForEvent {
		cv, carried := g.carrier(op.Execution, op.Input.EventID)
		if want := out.Exists && carried && cv <= v; out.Processed != want {
			g.rep.add(ErrReplicaRead, op.Execution, "%s on %s shows %s at v%d with event %s processed=%v; the winners up to v%d say %v",
				opAt(op), op.Replica, op.Execution, v, op.Input.EventID, out.Processed, v, want)
		}
	}
	if floor, at := seen.before(op.Replica, op.Execution, op.Call); v < floor {
		g.rep.add(ErrReplicaRead, op.Execution, "%s on %s shows %s at v%d, but the same replica had shown v%d at %dns: it went back in time",
			opAt(op), op.Replica, op.Execution, v, floor, at)
	}
	if op.ReadYourWrites {
		if floor, at := own.before(op.Replica, op.Execution, op.Call); v < floor {
			g.rep.add(ErrReplicaRead, op.Execution, "%s on %s shows %s at v%d, missing v%d that a commit through this replica acknowledged at %dns (read-your-writes)",
				opAt(op), op.Replica, op.Execution, v, floor, at)
		}
	}
	if !op.Heal {
		g.staleness(i, v, chain, st)
	}
}

// staleness records how far behind the primary's acknowledged versions a
// replica load was when it was called.
func (g *globalChecker) staleness(i int, v int64, chain []*Operation, st *ReplicaStats) {
	op := &g.h.Ops[i]
	if g.acks == nil {
		g.acks = map[string]*ackIndex{}
	}
	x := g.acks[op.Execution]
	if x == nil {
		x = newAckIndex(chain)
		g.acks[op.Execution] = x
	}
	acked, first := x.above(v, op.Call)
	if acked == 0 {
		return
	}
	s := StaleRead{Op: i, Behind: acked - v, By: time.Duration(op.Call - first)}
	st.Stale = append(st.Stale, s)
	st.MaxStaleness, st.MaxBehind = max(st.MaxStaleness, s.By), max(st.MaxBehind, s.Behind)
}

// replicaProbe holds one replica is_processed to the rules.
func (g *globalChecker) replicaProbe(op *Operation, seen, own *floors) {
	cv, carried := g.carrier(op.Execution, op.Input.EventID)
	if op.Output.Processed {
		if !carried {
			return // the dedupe check reports a marker no winner carries
		}
		if w := g.atVer[op.Execution][cv]; w.Call > op.Return {
			g.rep.add(ErrReplicaRead, op.Execution, "%s on %s says %s/%s is processed, but %s, which carries it, was called only after the read returned",
				opAt(op), op.Replica, op.Execution, op.Input.EventID, name(w))
		}
		return
	}
	if !carried {
		return
	}
	floor, _ := seen.before(op.Replica, op.Execution, op.Call)
	if op.ReadYourWrites {
		f, _ := own.before(op.Replica, op.Execution, op.Call)
		floor = max(floor, f)
	}
	if cv <= floor {
		g.rep.add(ErrReplicaRead, op.Execution, "%s on %s says %s/%s is not processed, although the replica already held v%d, whose winner %s carries it",
			opAt(op), op.Replica, op.Execution, op.Input.EventID, floor, name(g.atVer[op.Execution][cv]))
	}
}

// replicaConvergence holds every replica heal load to the primary's final
// row.
func (g *globalChecker) replicaConvergence() {
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if !op.Heal || op.Replica == "" || op.Kind != KindLoad || op.Output.Outcome != OutcomeOK {
			continue
		}
		fin := g.final.loads[op.Execution]
		if fin == nil {
			continue
		}
		a, b := &op.Output, &fin.Output
		if a.Exists != b.Exists || (a.Exists && (a.Version != b.Version || a.Data != b.Data)) {
			g.rep.add(ErrReplicaConvergence, op.Execution, "after the heal, replica %s shows %s as %s but the primary holds %s",
				op.Replica, op.Execution, rowText(a), rowText(b))
		}
	}
}

// rowText describes a loaded row for messages.
func rowText(o *Output) string {
	if !o.Exists {
		return "absent"
	}
	return fmt.Sprintf("v%d (%s)", o.Version, short(o.Data))
}
