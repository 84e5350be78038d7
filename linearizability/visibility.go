package linearizability

// Atomic visibility: load_for_event answers the execution row and whether
// an event is processed from one snapshot, and a commit writes its row and
// its dedupe marker in one transaction. So a single answer can show part
// of a commit:
//
//   - the row a commit wrote (its witness token in the data) without the
//     marker of the event that same commit processed;
//   - the marker of an event whose only winning carrier wrote a version the
//     answer's row has not reached.
//
// The workload aims load_for_event at the event of a commit in flight, so
// that such answers are drawn while the commit is being applied.
func (g *globalChecker) atomicReads() {
	carriers := g.carriers()
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Kind != KindLoadForEvent || op.Output.Outcome != OutcomeOK || op.Input.EventID == "" {
			continue
		}
		if op.Output.Exists && !op.Output.Processed {
			if w := g.attempts[Token(op.Output.Data)]; w != nil && w.Execution == op.Execution && w.Input.EventID == op.Input.EventID {
				g.rep.add(ErrAtomicity, op.Execution, "%s saw v%d written by %s without the dedupe marker of event %s that the same commit wrote: a reader saw part of a commit",
					opAt(op), op.Output.Version, name(w), op.Input.EventID)
				continue
			}
		}
		if op.Output.Processed && g.chainOK[op.Execution] {
			var won []*Operation
			for _, c := range carriers[procKey{op.Execution, op.Input.EventID}] {
				if g.won(c) {
					won = append(won, c)
				}
			}
			if len(won) == 1 && (!op.Output.Exists || op.Output.Version < g.winner[won[0]]) {
				g.rep.add(ErrAtomicity, op.Execution, "%s saw event %s processed with the row at v%d, before %s wrote v%d with that marker: a reader saw part of a commit",
					opAt(op), op.Input.EventID, op.Output.Version, name(won[0]), g.winner[won[0]])
			}
		}
	}
}
