package procfault

// Why a power cut can bring back what an earlier one lost (NORMAL).
//
// In WAL mode, recovery replays the WAL's frames up to the last commit
// frame whose checksum chain holds; frames past it stay in the file. The
// next writer appends from the end of that chain, over them, with the same
// salts. If a later cut drops those overwrites but keeps, say, an append
// whose bytes complete one of the old frames, the old frames chain again
// and the transactions the earlier cut lost are back, on top of the same
// tables they were written on, and the writes made since are gone. The
// file is sound and holds whole transactions in their order: SQLite at
// synchronous=NORMAL promises that, and no durability. A recovered store
// is therefore judged against the tables a prefix of the writes since the
// last recovery leaves, or failing that a prefix of a branch: writes an
// earlier cut lost on top of the same confirmed tables. A branch that
// comes back is reported, never silently passed. (Evidence: the WAL images
// of a run that showed it, in docs/DURABILITY.md.)

// branch is a run of writes made on top of the confirmed tables that a
// power cut lost: the acknowledged ones the recovery did not hold, then
// the one in flight at the kill, if any.
type branch[T any] struct {
	cut   int // the cut that lost it
	ops   []T
	acked int // ops[:acked] were acknowledged
}

// branches are the lost branches written on top of the confirmed tables,
// oldest first.
type branches[T any] struct {
	lost []branch[T]
	// recoveries counts the recoveries judged: recovery r follows cut r.
	recoveries int
}

// next numbers the recovery being judged (the cut it follows).
func (b *branches[T]) next() int {
	r := b.recoveries
	b.recoveries++
	return r
}

// after updates the lost branches once a recovery at cut held kept of the
// writes since the last one (all, with the one in flight, when applied):
// nothing held, the confirmed tables did not move and the writes join the
// branches on them; otherwise they moved and only the lost rest of these
// writes is written on top of them.
func (b *branches[T]) after(cut int, acked, inflight []T, kept int, applied bool) {
	ops := append(append([]T(nil), acked...), inflight...)
	if applied {
		kept = len(ops)
	}
	rest := branch[T]{cut: cut, ops: ops[kept:], acked: max(0, len(acked)-kept)}
	if kept > 0 {
		b.lost = nil
	}
	if len(rest.ops) > 0 {
		b.lost = append(b.lost, rest)
	}
}

// cameBack records that a recovery held the first n writes of branch i:
// the confirmed tables moved onto them, and only the branch's rest is
// written on top.
func (b *branches[T]) cameBack(i, n int) {
	br := b.lost[i]
	b.lost = nil
	if n < len(br.ops) {
		b.lost = []branch[T]{{cut: br.cut, ops: br.ops[n:], acked: max(0, br.acked-n)}}
	}
}

// forget drops every branch (the tables start again from empty).
func (b *branches[T]) forget() { b.lost = nil }
