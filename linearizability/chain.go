package linearizability

import (
	"cmp"
	"slices"
)

// chains finds each execution's winners, then holds every commit's reported
// outcome against them.
func (g *globalChecker) chains() {
	for _, exec := range g.execs {
		fl := g.final.loads[exec]
		if fl == nil {
			g.rep.Notes = append(g.rep.Notes, "no heal load of "+exec+": its winners are unknown")
			continue
		}
		if !g.chain(exec, fl) {
			continue
		}
		g.chainOK[exec] = true
		for _, op := range g.byExec[exec] {
			g.checkOutcome(op)
		}
	}
}

// chain walks prev links from the final row down to version 1. Every step
// must land on an attempt on this execution committed from the version
// below; the walk has exactly (final version) steps and ends on a commit
// from version 0. It returns false when the chain is broken.
func (g *globalChecker) chain(exec string, fl *Operation) bool {
	if !fl.Output.Exists {
		g.atVer[exec] = make([]*Operation, 1)
		return true
	}
	v := fl.Output.Version
	c := g.attempts[Token(fl.Output.Data)]
	if v < 1 || c == nil || c.Execution != exec || c.Input.Data != fl.Output.Data {
		g.rep.add(ErrPhantom, exec, "the final row of %s (v%d, %s) is not the data of any recorded attempt", exec, v, fl.Output.Data)
		return false
	}
	if n := int64(len(g.byExec[exec])); v > n {
		g.rep.add(ErrLostUpdate, exec, "the final row of %s is at v%d, but only %d commits were attempted on it", exec, v, n)
		return false
	}
	chain := make([]*Operation, v+1)
	inChain := map[*Operation]bool{}
	for ; v > 0; v-- {
		if c.Input.Expected != v-1 {
			g.rep.add(ErrLostUpdate, exec, "chain of winners of %s broken: %s sits at v%d but committed from v%d", exec, name(c), v, c.Input.Expected)
			return false
		}
		if inChain[c] {
			g.rep.add(ErrLostUpdate, exec, "chain of winners of %s loops through %s", exec, name(c))
			return false
		}
		inChain[c], chain[v] = true, c
		if v == 1 {
			break
		}
		prev := g.attempts[c.Input.Prev]
		if prev == nil || prev.Execution != exec {
			g.rep.add(ErrLostUpdate, exec, "chain of winners of %s broken below v%d: %s believed v%d held %q, which no attempt on %s wrote",
				exec, v, name(c), v-1, c.Input.Prev, exec)
			return false
		}
		c = prev
	}
	if c != nil && c.Input.Prev != "" {
		g.rep.add(ErrLostUpdate, exec, "chain of winners of %s broken: %s created the execution but names %q as its predecessor", exec, name(c), c.Input.Prev)
		return false
	}
	for v, c := range chain[1:] {
		g.winner[c] = int64(v + 1)
	}
	g.atVer[exec] = chain
	return true
}

// checkOutcome holds one commit's reported outcome against the chain.
func (g *globalChecker) checkOutcome(op *Operation) {
	v, won := g.winner[op]
	switch {
	case op.Output.Outcome == OutcomeOK && !won:
		g.rep.add(ErrLostUpdate, op.Execution, "%s returned ok but is not among the winners: %s", name(op), g.holder(op))
	case op.Output.Outcome == OutcomeConflict && won:
		g.rep.add(ErrAtomicity, op.Execution, "%s returned a conflict but its write is v%d of the chain", name(op), v)
	case op.Output.Outcome == OutcomeFailed && won:
		g.rep.add(ErrAtomicity, op.Execution, "%s failed as not applied but its write is v%d of the chain", name(op), v)
	}
}

// holder says who holds the version op would have written.
func (g *globalChecker) holder(op *Operation) string {
	chain := g.atVer[op.Execution]
	v := op.Input.Expected + 1
	if v < int64(len(chain)) && chain[v] != nil {
		return "v" + itoa(v) + " is " + Token(chain[v].Input.Data)
	}
	if len(chain) <= 1 {
		return op.Execution + " does not exist at the end"
	}
	return "the final version is " + itoa(int64(len(chain)-1))
}

// carriers lists, per dedupe marker, the commits that carry its event, in
// history order. It is made once, by the first check of the rows stage
// that asks (they run one after another).
func (g *globalChecker) carriers() map[procKey][]*Operation {
	if g.carrierList != nil {
		return g.carrierList
	}
	out := map[procKey][]*Operation{}
	for _, exec := range g.execs {
		for _, op := range g.byExec[exec] {
			if op.Input.EventID != "" {
				k := procKey{exec, op.Input.EventID}
				out[k] = append(out[k], op)
			}
		}
	}
	g.carrierList = out
	return out
}

// dedupe checks the ledger: a marker exists at the end iff some commit
// carrying it won, and a marker once seen never disappears.
func (g *globalChecker) dedupe() {
	carriers := g.carriers()
	keys := make([]procKey, 0, len(carriers))
	for k := range carriers {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b procKey) int {
		return cmp.Or(cmp.Compare(a.exec, b.exec), cmp.Compare(a.event, b.event))
	})
	for _, k := range keys {
		if !g.chainOK[k.exec] {
			continue
		}
		fin := g.final.processed[k]
		if fin == nil {
			g.rep.Notes = append(g.rep.Notes, "no heal is_processed of "+k.exec+"/"+k.event)
			continue
		}
		var winner *Operation
		for _, op := range carriers[k] {
			if g.won(op) {
				winner = op
			}
		}
		switch {
		case winner != nil && !fin.Output.Processed:
			g.rep.add(ErrEffectOnce, k.exec, "processed event %s of winning %s is not in the dedupe ledger", k.event, name(winner))
		case winner == nil && fin.Output.Processed:
			g.rep.add(ErrAtomicity, k.exec, "dedupe marker %s/%s exists but no commit carrying it won (%s %s)",
				k.exec, k.event, name(carriers[k][0]), fate(carriers[k][0]))
		}
	}
	for i := range g.h.Ops {
		op := &g.h.Ops[i]
		if op.Heal || op.Output.Outcome != OutcomeOK || !op.Output.Processed ||
			(op.Kind != KindIsProcessed && op.Kind != KindLoadForEvent) {
			continue
		}
		k := procKey{op.Execution, op.Input.EventID}
		if carriers[k] == nil {
			g.rep.add(ErrPhantom, k.exec, "%s reported %s/%s processed, but no commit carries that event id", opAt(op), k.exec, k.event)
			continue
		}
		if fin := g.final.processed[k]; fin != nil && !fin.Output.Processed {
			g.rep.add(ErrEffectOnce, k.exec, "dedupe marker %s/%s seen by %s has disappeared at the end", k.exec, k.event, opAt(op))
		}
	}
}
