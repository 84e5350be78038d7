package guarded

import "github.com/storecheck/storecheck/model"

// SelectVersion reads the stored version after a lost compare-and-swap: (id).
const SelectVersion = "SELECT version FROM executions WHERE id = ?"

// CAS is the first statement of a commit: the guarded upsert. It affects one
// row when the row is absent and Old is 0 (an insert at version 1) or when
// the row is at Old (an update to Old+1), and none otherwise: a caller that
// sees no rows affected reports a conflict.
//
// Decision: the seed's upsert (INSERT … VALUES … ON CONFLICT DO UPDATE …
// WHERE version = old) also inserts an absent row when Old is not 0, where
// the contract wants a conflict with found = none. The SELECT form below
// carries that condition; it changes nothing else.
//
// SQLite's parser needs a WHERE on the SELECT of an INSERT … SELECT … ON
// CONFLICT; this one is also the condition.
func CAS(c Commit) Statement {
	return Statement{
		SQL: "INSERT INTO executions (id, definition_id, data, version) " +
			"SELECT ?, ?, ?, ? WHERE ? = 0 OR EXISTS (SELECT 1 FROM executions WHERE id = ?) " +
			"ON CONFLICT(id) DO UPDATE SET data = excluded.data, version = excluded.version " +
			"WHERE executions.version = ?",
		Args: []any{c.ID, c.DefinitionID, c.Data, c.New(), c.Old, c.ID, c.Old},
	}
}

// Statements is the whole commit: CAS first, then SideWrites. Run them as
// one atomic batch; the rows affected by the first say whether it won.
func Statements(c Commit, g Guard) []Statement {
	return append([]Statement{CAS(c)}, SideWrites(c, g)...)
}

// SideWrites are a commit's other writes in the seed's order — outbox,
// dedupe marker, timer ops, spawns, then the trace step and its trim — each
// conditioned by g.
func SideWrites(c Commit, g Guard) []Statement {
	w := writer{c: c, g: g}
	for _, e := range c.Emits {
		w.insert("INSERT INTO outbox (target_id, event) SELECT ?, ?", nullable(e.TargetID), e.Event)
	}
	if c.ProcessedEventID != nil {
		w.insert("INSERT OR IGNORE INTO processed_events (execution_id, event_id) SELECT ?, ?", c.ID, *c.ProcessedEventID)
	}
	for _, t := range c.Timers {
		// A schedule is delete-then-insert (an upsert of fire_at); a cancel
		// is the delete alone.
		w.delete("DELETE FROM timers WHERE execution_id = ? AND path = ?", c.ID, t.Path)
		if t.Action == model.TimerSchedule {
			w.insert("INSERT INTO timers (execution_id, path, fire_at) SELECT ?, ?, ?", c.ID, t.Path, t.FireAt)
		}
	}
	for _, s := range c.Spawns {
		w.insert("INSERT INTO spawns (parent_id, child_id, root_path, context) SELECT ?, ?, ?, ?", s.ParentID, s.ChildID, s.RootPath, s.Context)
	}
	if c.Trace != nil {
		// The index is computed inline (there is no read to compute it
		// from); the trim runs after the insert, in the same batch, so its
		// MAX(idx) already sees the new step.
		w.insert("INSERT INTO trace (execution_id, idx, entry) "+
			"SELECT ?, COALESCE((SELECT MAX(idx) FROM trace WHERE execution_id = ?), -1) + 1, ?", c.ID, c.ID, *c.Trace)
		if c.TraceMax > 0 {
			w.delete("DELETE FROM trace WHERE execution_id = ? AND idx <= "+
				"(SELECT MAX(idx) FROM trace WHERE execution_id = ?) - ?", c.ID, c.ID, c.TraceMax)
		}
	}
	return w.out
}

// writer appends side-writes with the guard's condition.
type writer struct {
	c   Commit
	g   Guard
	out []Statement
}

// condition is the guard as an SQL condition and its parameters; "" for
// none.
func (w *writer) condition() (string, []any) {
	switch w.g {
	case OnData:
		return "EXISTS (SELECT 1 FROM executions WHERE id = ? AND data = ?)", []any{w.c.ID, w.c.Data}
	case OnVersion:
		// The leak the seed warns about: a concurrent winner at the same
		// version satisfies this as well as our own upsert would.
		return "EXISTS (SELECT 1 FROM executions WHERE id = ? AND version = ?)", []any{w.c.ID, w.c.New()}
	}
	return "", nil
}

// insert appends an INSERT … SELECT …, with WHERE and the guard when there
// is one.
func (w *writer) insert(sql string, args ...any) {
	if cond, cargs := w.condition(); cond != "" {
		sql += " WHERE " + cond
		args = append(args, cargs...)
	}
	w.out = append(w.out, Statement{SQL: sql, Args: args})
}

// delete appends a DELETE whose WHERE already exists, ANDed with the guard.
func (w *writer) delete(sql string, args ...any) {
	if cond, cargs := w.condition(); cond != "" {
		sql += " AND " + cond
		args = append(args, cargs...)
	}
	w.out = append(w.out, Statement{SQL: sql, Args: args})
}

// nullable turns a *string into a parameter: nil (SQL NULL) or the string.
func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
