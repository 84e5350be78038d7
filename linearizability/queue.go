package linearizability

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// The outbox and the spawn queue are checked alike: every entry belongs to
// a winning commit; a winner's entries are pending exactly once, under one
// seq, from when its commit returned until they are acknowledged; seqs
// ascend within a read, are never reused, follow the commits' versions
// within one execution and real time across executions (queueorder.go).

// queueItem is one pending entry as a read returned it.
type queueItem struct {
	seq    int64
	key    string // event id or child id
	detail string // target or parent, compared with the commit's
}

// queueSpec describes one queue to queue().
type queueSpec struct {
	table, entry string // "outbox", "emit"
	read, ack    Kind
	items        func(*Operation) []queueItem
	owners       map[string]owner
	keys         func(*Operation) []string // a commit's keys, in batch order
	detail       func(owner) string
	final        *Operation
}

func outboxQueue(g *globalChecker) queueSpec {
	return queueSpec{
		table: "outbox", entry: "emit", read: KindPendingOutbox, ack: KindAckOutbox, owners: g.emits, final: g.final.outbox,
		items: func(op *Operation) []queueItem {
			out := make([]queueItem, len(op.Output.Outbox))
			for i, it := range op.Output.Outbox {
				out[i] = queueItem{it.Seq, it.EventID, target(it.Target)}
			}
			return out
		},
		keys: func(op *Operation) []string {
			out := make([]string, len(op.Input.Emits))
			for i, e := range op.Input.Emits {
				out[i] = e.EventID
			}
			return out
		},
		detail: func(o owner) string { return target(o.op.Input.Emits[o.i].Target) },
	}
}

func spawnQueue(g *globalChecker) queueSpec {
	return queueSpec{
		table: "spawns", entry: "spawn", read: KindPendingSpawns, ack: KindAckSpawn, owners: g.spawns, final: g.final.spawns,
		items: func(op *Operation) []queueItem {
			out := make([]queueItem, len(op.Output.Spawns))
			for i, it := range op.Output.Spawns {
				out[i] = queueItem{it.Seq, it.Child, "parent " + it.Parent}
			}
			return out
		},
		keys:   func(op *Operation) []string { return op.Input.Spawns },
		detail: func(o owner) string { return "parent " + o.op.Execution },
	}
}

func target(t *string) string {
	if t == nil {
		return "no target"
	}
	return fmt.Sprintf("target %q", *t)
}

// queueState is what queue() learns while it reads.
type queueState struct {
	spec     queueSpec
	reads    []*Operation // the primary's reads, by call time
	replica  []*Operation // reads replicas served, by call time
	seqOf    map[string]int64
	keyOf    map[int64]string
	acks     map[int64][]*Operation // non-failed acks per seq
	reported map[string]bool        // keys already reported
	// listed is, per key, when the primary's reads that list it were
	// called and returned: the first return (by then the entry surely
	// existed) and the last call.
	listed map[string]listedSpan
}

// listedSpan is when the primary's reads listing one entry ran.
type listedSpan struct{ firstReturn, lastCall int64 }

// queue runs the queue checks for one table. Without its heal read, the
// reads are still checked on their own and against each other (an entry
// listed twice, at two seqs, after its acknowledgement, that no commit
// wrote, or missing); only what the final contents would tell is not.
func (g *globalChecker) queue(ctx context.Context, spec queueSpec) error {
	if spec.final == nil && !g.readsOnly {
		g.rep.Notes = append(g.rep.Notes, fmt.Sprintf("no heal read of %s: its final contents are unknown (its reads were checked against each other only)", spec.table))
	}
	q := &queueState{spec: spec, seqOf: map[string]int64{}, keyOf: map[int64]string{},
		acks: map[int64][]*Operation{}, reported: map[string]bool{}, listed: map[string]listedSpan{}}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		switch {
		case op.Kind == spec.read && op.Output.Outcome == OutcomeOK && op.Replica != "":
			q.replica = append(q.replica, op)
		case op.Kind == spec.read && op.Output.Outcome == OutcomeOK:
			q.reads = append(q.reads, op)
		case op.Kind == spec.ack && op.Output.Outcome != OutcomeFailed:
			q.acks[op.Input.Seq] = append(q.acks[op.Input.Seq], op)
		}
	}
	byCall := func(a, b *Operation) int { return cmp.Compare(a.Call, b.Call) }
	slices.SortFunc(q.reads, byCall)
	for _, r := range q.reads {
		for _, it := range spec.items(r) {
			q.listed[it.key] = spread(q.listed[it.key], r)
		}
	}
	all := slices.Concat(q.reads, q.replica)
	slices.SortStableFunc(all, byCall)
	for _, r := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.queueRead(q, r)
	}
	g.queuePresence(q)
	g.queueOrder(q)
	g.queueRealTime(q)
	g.queueReadOrder(q)
	if len(q.replica) > 0 {
		g.rep.Notes = append(g.rep.Notes, fmt.Sprintf("%d %s reads served by replicas were checked for what they show (committed entries, in order, each at one seq), and for what they miss only against their own replica's reads and writes (they may be stale; prefix.go)", len(q.replica), spec.table))
	}
	return nil
}

// queueRead checks one read's entries on their own and against earlier
// reads. A replica's read shows a committed state, perhaps an old one: what
// it shows must have been committed, in order, each entry at one seq; that
// it still shows an entry acknowledged since proves nothing.
func (g *globalChecker) queueRead(q *queueState, r *Operation) {
	spec := q.spec
	inRead := map[string]int64{}
	prev := int64(-1 << 63)
	for _, it := range spec.items(r) {
		if it.seq <= prev {
			g.rep.add(ErrDeliveryOrder, "", "%s lists %s seq %d after seq %d", opAt(r), spec.table, it.seq, prev)
		}
		prev = it.seq
		if s, dup := inRead[it.key]; dup {
			g.rep.add(ErrDuplicateDelivery, "", "%s lists %s %s twice, at seq %d and seq %d", opAt(r), spec.entry, it.key, s, it.seq)
		}
		inRead[it.key] = it.seq
		if s, ok := q.seqOf[it.key]; ok && s != it.seq {
			g.rep.add(ErrDuplicateDelivery, "", "%s %s is pending at seq %d and at seq %d (%s)", spec.entry, it.key, s, it.seq, opAt(r))
		} else if !ok {
			q.seqOf[it.key] = it.seq
		}
		if k, ok := q.keyOf[it.seq]; ok && k != it.key {
			g.rep.add(ErrDeliveryOrder, "", "%s seq %d held %s %s and later %s (%s)", spec.table, it.seq, spec.entry, k, it.key, opAt(r))
		} else if !ok {
			q.keyOf[it.seq] = it.key
		}
		for _, a := range q.acks[it.seq] {
			// The ack removed the entry only if the entry surely existed
			// when the ack took effect: an ack of a seq not created yet is
			// a no-op.
			if r.Replica == "" && a.Output.Outcome == OutcomeOK && a.Return < r.Call && g.existedBy(q, it.key) < a.Call && !q.reported["ack:"+it.key] {
				q.reported["ack:"+it.key] = true
				if !r.Heal && spec.final != nil && !finalHolds(spec, it.key) {
					// Gone for good at the end: the read showed an old state.
					g.rep.add(ErrStaleRead, "", "%s still lists %s entry seq=%d (%s), acknowledged by c%d %s before it was called; the final tables no longer hold it",
						opAt(r), spec.table, it.seq, it.key, a.Client, since(r.Call-a.Return))
					continue
				}
				g.rep.add(ErrDuplicateDelivery, "", "%s entry seq=%d (%s) was acknowledged by c%d at %dns but is pending again in %s",
					spec.table, it.seq, it.key, a.Client, a.Return, opAt(r))
			}
		}
		o, ok := spec.owners[it.key]
		if !ok {
			if !q.reported[it.key] {
				q.reported[it.key] = true
				g.rep.add(ErrPhantom, "", "%s entry seq=%d (%s) matches no %s of any recorded commit (%s)", spec.table, it.seq, it.key, spec.entry, opAt(r))
			}
			continue
		}
		if want := spec.detail(o); want != it.detail && !q.reported["detail:"+it.key] {
			q.reported["detail:"+it.key] = true
			g.rep.add(ErrPhantom, o.op.Execution, "%s entry seq=%d (%s) has %s but %s wrote it with %s", spec.table, it.seq, it.key, it.detail, name(o.op), want)
		}
		if g.decided(o.op) && !g.won(o.op) && !q.reported[it.key] {
			q.reported[it.key] = true
			g.rep.add(ErrAtomicity, o.op.Execution, "%s %s but its %s entry seq=%d (%s) exists (%s)", name(o.op), fate(o.op), spec.table, it.seq, it.key, opAt(r))
		}
	}
}

// existedBy is a time by which the entry key surely existed: when its
// commit returned ok, or when a read of the primary that lists it
// returned, whichever came first; EndOfHistory when neither.
func (g *globalChecker) existedBy(q *queueState, key string) int64 {
	at := EndOfHistory
	if o, ok := q.spec.owners[key]; ok && o.op.Output.Outcome == OutcomeOK {
		at = o.op.Return
	}
	if l, ok := q.listed[key]; ok {
		at = min(at, l.firstReturn)
	}
	return at
}

// spread widens a listedSpan by one read.
func spread(l listedSpan, r *Operation) listedSpan {
	if l == (listedSpan{}) {
		return listedSpan{r.returnTime(), r.Call}
	}
	return listedSpan{min(l.firstReturn, r.returnTime()), max(l.lastCall, r.Call)}
}

// queuePresence checks that every entry of a winner is in every read made
// after its commit returned (after everything, for the heal read and for an
// indeterminate winner) until an acknowledgement that may have removed it
// was called: one of its seq once the seq is known (of any seq no read
// listed, before), that did not return before the commit was called.
func (g *globalChecker) queuePresence(q *queueState) {
	var unknown []*Operation // acks of seqs no read listed
	for seq, acks := range q.acks {
		if _, ok := q.keyOf[seq]; !ok {
			unknown = append(unknown, acks...)
		}
	}
	var dues []due
	for op := range g.winner {
		after := g.takenBy(op) // EndOfHistory for an indeterminate winner nothing showed
		for _, k := range q.spec.keys(op) {
			acks := unknown
			if seq, seen := q.seqOf[k]; seen {
				acks = q.acks[seq]
			}
			gone := EndOfHistory
			for _, a := range acks {
				if a.returnTime() >= op.Call {
					gone = min(gone, a.Call)
				}
			}
			dues = append(dues, due{key: k, owner: op, after: after, gone: gone})
		}
	}
	observed := map[string]bool{}
	for _, r := range slices.Concat(q.reads, q.replica) {
		for _, it := range q.spec.items(r) {
			observed[it.key] = true
		}
	}
	listed := func(r *Operation) map[string]bool {
		in := map[string]bool{}
		for _, it := range q.spec.items(r) {
			in[it.key] = true
		}
		return in
	}
	missing(q.reads, dues, listed, nil, q.reported, func(r *Operation, d due) {
		seq := q.seqOf[d.key]
		switch {
		case observed[d.key] && !r.Heal && (finalHolds(q.spec, d.key) || d.gone < EndOfHistory || q.listed[d.key].lastCall > r.returnTime()):
			// Still there afterwards, or acknowledged later: this read
			// was served from an old state; nothing was lost.
			g.rep.add(ErrStaleRead, d.owner.Execution, "%s misses %s %s (seq %d) of %s, pending since %s before it was called and still pending after it",
				opAt(r), q.spec.entry, d.key, seq, name(d.owner), since(r.Call-d.after))
		case observed[d.key]:
			g.rep.add(ErrLostDelivery, d.owner.Execution, "%s %s (seq %d) of %s vanished before it was acknowledged: missing in %s",
				q.spec.entry, d.key, seq, name(d.owner), opAt(r))
		default:
			g.rep.add(ErrAtomicity, d.owner.Execution, "%s won (v%d) but its %s %s is not in %s (%s)",
				name(d.owner), g.winner[d.owner], q.spec.entry, d.key, q.spec.table, opAt(r))
		}
	})
	rows := func(r *Operation) []shownRow {
		items := q.spec.items(r)
		out := make([]shownRow, 0, len(items))
		for _, it := range items {
			if o, ok := q.spec.owners[it.key]; ok {
				out = append(out, shownRow{it.key, o.op})
			}
		}
		return out
	}
	partial(q.reads, dues, rows, nil, q.reported, func(r *Operation, shown string, d due) {
		g.rep.add(ErrAtomicity, d.owner.Execution, "%s lists %s %s of %s but not its %s %s: a reader saw part of a commit",
			opAt(r), q.spec.entry, shown, name(d.owner), q.spec.entry, d.key)
	})
}

// shownRow is a row a read listed and the attempt that wrote it.
type shownRow struct {
	key   string
	owner *Operation
}

// partial checks that no read of the primary (heal reads aside: they are
// held to every winner) lists part of a winner's rows in a table: a read
// that lists one of them was linearized after the commit, so it lists
// every other (dues, by owner) that was not removed by an operation called
// before it returned, or exempt. report is called once per key.
func partial(reads []*Operation, dues []due, rows func(*Operation) []shownRow, exempt func(*Operation, due) bool, reported map[string]bool, report func(*Operation, string, due)) {
	byOwner := map[*Operation][]int{}
	for i, d := range dues {
		byOwner[d.owner] = append(byOwner[d.owner], i)
	}
	for _, r := range reads {
		if r.Heal {
			continue
		}
		shown := rows(r)
		if len(shown) == 0 {
			continue
		}
		in := make(map[string]bool, len(shown))
		for _, s := range shown {
			in[s.key] = true
		}
		done := map[*Operation]bool{}
		for _, s := range shown {
			idx := byOwner[s.owner]
			if len(idx) < 2 || done[s.owner] {
				continue
			}
			done[s.owner] = true
			for _, i := range idx {
				d := dues[i]
				if in[d.key] || reported[d.key] || d.gone <= r.returnTime() || (exempt != nil && exempt(r, d)) {
					continue
				}
				reported[d.key] = true
				report(r, s.key, d)
			}
		}
	}
}

// due is a row some reads must list: those called after after (every heal
// read, when after is EndOfHistory: an indeterminate winner's), until an
// operation that may have removed it is called (gone); a read that
// overlaps that operation may list it or not.
type due struct {
	key   string
	owner *Operation
	after int64
	gone  int64
	// fireAt, for a timer: a due_timers(now) read with now below it need
	// not list it.
	fireAt float64
}

// missing walks reads in call order and calls report(r, d) for each due
// row d that r should list and does not, once per key (reported holds the
// keys reported already, by this walk or by an earlier check). exempt, if
// not nil, says that r need not list d (though a later read may have to).
func missing(reads []*Operation, dues []due, listed func(*Operation) map[string]bool, exempt func(*Operation, due) bool, reported map[string]bool, report func(*Operation, due)) {
	slices.SortFunc(dues, func(a, b due) int { return cmp.Or(cmp.Compare(a.after, b.after), cmp.Compare(a.key, b.key)) })
	var pending []due
	next := 0
	for _, r := range reads {
		limit := r.Call
		if r.Heal {
			limit = EndOfHistory
		}
		for next < len(dues) && (dues[next].after < limit || (r.Heal && dues[next].after == EndOfHistory)) {
			pending = append(pending, dues[next])
			next++
		}
		if len(pending) == 0 {
			continue
		}
		in := listed(r)
		kept := pending[:0]
		for _, d := range pending {
			switch {
			case d.gone < r.Call:
				continue // possibly removed for good
			case d.gone <= r.returnTime() || in[d.key] || reported[d.key] || (exempt != nil && exempt(r, d)):
				// A removal called at the instant the read returned
				// overlaps it, as porcupine orders a call before a return
				// of the same time.
				kept = append(kept, d)
				continue
			}
			reported[d.key] = true
			report(r, d)
		}
		pending = kept
	}
}

// finalHolds reports whether the final (heal) read of spec's queue lists
// key.
func finalHolds(spec queueSpec, key string) bool {
	if spec.final == nil {
		return false
	}
	for _, it := range spec.items(spec.final) {
		if it.key == key {
			return true
		}
	}
	return false
}

// since says how long ns nanoseconds are, for a violation's text.
func since(ns int64) string {
	return time.Duration(max(ns, 0)).Round(time.Millisecond).String()
}
