package rqlite

import (
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/model"
)

// Guard chooses how a commit's side-writes are tied to its CAS.
type Guard string

const (
	// GuardData is the seed's protocol: the guarded upsert first, then every
	// side-write guarded on the row now holding exactly this commit's data;
	// the first result's rows affected decide. Its one gap, which the seed
	// calls benign: a losing commit whose data is byte-identical to the
	// row's (a stale re-delivery that recomputes the same state) satisfies
	// the guard, so its side-writes land although its CAS lost.
	GuardData Guard = "data"
	// GuardPreState closes that gap within the same single transaction:
	// every side-write is guarded on the row's state before the commit (at
	// version old, or absent when old is 0), and the guarded upsert, whose
	// condition is the same, comes last and decides. rqlite applies each
	// request atomically and in log order, so the side-writes happen
	// exactly when the upsert wins.
	GuardPreState Guard = "prestate"
	// GuardVersion is a deliberately broken variant (the mutant the rqlite
	// seed warns about): side-writes guarded on the row being at the new
	// version, so a commit that lost its CAS to a writer that reached the
	// same version still writes its outbox, dedupe, timer, spawn and trace
	// rows. It exists to show storecheck catches it on a real cluster.
	GuardVersion Guard = "version"
)

// ParseGuard reads a guard name.
func ParseGuard(s string) (Guard, error) {
	switch g := Guard(s); g {
	case GuardData, GuardPreState, GuardVersion:
		return g, nil
	}
	return "", fmt.Errorf("unknown guard %q (want data, the seed's; prestate; or version, a deliberately broken mutant)", s)
}

// commitList builds a commit's statement list for guard g and returns it
// with the index of the CAS statement, whose rows affected decide.
func commitList(exe *model.Execution, b model.Batch, traceMax int, g Guard) ([]Statement, int, error) {
	c, err := guarded.Prepare(exe, b, traceMax)
	if err != nil {
		return nil, 0, err
	}
	switch g {
	case GuardVersion:
		return guarded.Statements(c, guarded.OnVersion), 0, nil
	case GuardPreState:
	default:
		return guarded.Statements(c, guarded.OnData), 0, nil
	}
	cond := "((? = 0 AND NOT EXISTS (SELECT 1 FROM executions WHERE id = ?)) OR EXISTS (SELECT 1 FROM executions WHERE id = ? AND version = ?))"
	condArgs := []any{c.Old, c.ID, c.ID, c.Old}
	side := guarded.SideWrites(c, guarded.Unguarded)
	out := make([]Statement, 0, len(side)+1)
	for _, s := range side {
		sql := s.SQL
		switch {
		case strings.HasPrefix(sql, "INSERT"): // INSERT … SELECT …, no WHERE yet
			sql += " WHERE " + cond
		case strings.HasPrefix(sql, "DELETE"): // DELETE … WHERE …
			sql += " AND " + cond
		default:
			return nil, 0, fmt.Errorf("unexpected side-write %.40q", sql)
		}
		out = append(out, Statement{SQL: sql, Args: append(append([]any(nil), s.Args...), condArgs...)})
	}
	out = append(out, guarded.CAS(c))
	return out, len(out) - 1, nil
}
