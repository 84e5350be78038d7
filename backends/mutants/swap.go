package mutants

import "github.com/storecheck/storecheck/backends/sqlstore"

// The mutants below are the seed's SQLite store with one statement swapped.
// Where a swap drops a placeholder, the store still passes the argument;
// modernc's driver binds the placeholders a statement declares and ignores
// the rest, as a careless edit of the SQL alone would leave it.

// blindWrite drops the version check from the compare-and-swap.
func blindWrite(st *sqlstore.Statements) {
	// BUG: no "AND version = ?": the row is overwritten at whatever
	// version it holds. (data, new version, id) are bound; the old version
	// is passed and ignored.
	st.UpdateExecution = "UPDATE executions SET data = ?, version = ? WHERE id = ?"
}

// traceOffByOne trims the ring one entry short.
func traceOffByOne(st *sqlstore.Statements) {
	// BUG: "<" where the seed has "<=": the ring keeps trace_max + 1 steps.
	st.TrimTrace = "DELETE FROM trace WHERE execution_id = ? AND idx < " +
		"(SELECT MAX(idx) FROM trace WHERE execution_id = ?) - ?"
}

// traceIndexReset numbers read_trace's entries by position, the SQL form of
// Python's enumerate(rows).
func traceIndexReset(st *sqlstore.Statements) {
	// BUG: the index is the entry's position in the ring, not its idx, so
	// once a trim has removed the oldest steps the indices start again at 0.
	st.ReadTrace = "SELECT ROW_NUMBER() OVER (ORDER BY idx) - 1, " + sqlstore.AsBlob("entry") +
		" FROM trace WHERE execution_id = ? ORDER BY idx"
}

// staleTimerSweep deletes a swept timer whatever it holds now.
func staleTimerSweep(st *sqlstore.Statements) {
	// BUG: no "AND fire_at = ?": a timer re-armed since the sweep read it
	// is deleted too. (execution_id, path) are bound; fire_at is ignored.
	st.DeleteTimer = "DELETE FROM timers WHERE execution_id = ? AND path = ?"
}

// dueTimersStrict misses timers due exactly now.
func dueTimersStrict(st *sqlstore.Statements) {
	// BUG: "<" where the contract has "<=".
	st.DueTimers = "SELECT " + sqlstore.AsBlob("execution_id") + ", " + sqlstore.AsBlob("path") +
		", fire_at FROM timers WHERE fire_at < ? ORDER BY fire_at"
}

// dueTimersIgnoreNow hands a sweep every timer, due or not.
func dueTimersIgnoreNow(st *sqlstore.Statements) {
	// BUG: now is bound but never compared: "? IS NOT NULL" where the
	// contract has "fire_at <= ?".
	st.DueTimers = "SELECT " + sqlstore.AsBlob("execution_id") + ", " + sqlstore.AsBlob("path") +
		", fire_at FROM timers WHERE ? IS NOT NULL ORDER BY fire_at"
}

// outboxUnordered groups the pending outbox by target, as a relay batching
// deliveries per target might want it.
func outboxUnordered(st *sqlstore.Statements) {
	// BUG: ordered by target first, so seqs are not ascending across
	// targets.
	st.PendingOutbox = "SELECT seq, " + sqlstore.AsBlob("target_id") + ", " + sqlstore.AsBlob("event") +
		" FROM outbox ORDER BY target_id, seq"
}

// eventIDNoCase compares processed event ids without regard to case, as a
// schema copied from a store whose ids were case-insensitive would.
func eventIDNoCase(st *sqlstore.Statements) {
	// BUG: COLLATE NOCASE on event_id: once "ev1" is processed, "EV1" is
	// reported processed too, and its commit's marker is silently ignored
	// by INSERT OR IGNORE.
	st.Schema[2] = "CREATE TABLE IF NOT EXISTS processed_events (execution_id TEXT NOT NULL, " +
		"event_id TEXT NOT NULL COLLATE NOCASE, PRIMARY KEY (execution_id, event_id))"
}

// executionIDNoCase compares execution ids without regard to case in every
// table, as MySQL's default collation does to every key: every column that
// holds an execution id is COLLATE NOCASE, so the keys built on them (the
// executions row, its dedupe ledger, timers and trace) are too.
func executionIDNoCase(st *sqlstore.Statements) {
	// BUG: once "e1" exists, "E1" is the same row: a create of "E1" from
	// version 0 conflicts with e1's version, a commit of "E1" at e1's
	// version overwrites e1, and E1's events, timers and trace land on e1's.
	st.Schema[0] = "CREATE TABLE IF NOT EXISTS executions (id TEXT PRIMARY KEY COLLATE NOCASE, " +
		"definition_id TEXT NOT NULL, data TEXT NOT NULL, version INTEGER NOT NULL)"
	st.Schema[1] = "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, " +
		"target_id TEXT COLLATE NOCASE, event TEXT NOT NULL)"
	st.Schema[2] = "CREATE TABLE IF NOT EXISTS processed_events (execution_id TEXT NOT NULL COLLATE NOCASE, " +
		"event_id TEXT NOT NULL, PRIMARY KEY (execution_id, event_id))"
	st.Schema[3] = "CREATE TABLE IF NOT EXISTS timers (execution_id TEXT NOT NULL COLLATE NOCASE, " +
		"path TEXT NOT NULL, fire_at REAL NOT NULL, PRIMARY KEY (execution_id, path))"
	st.Schema[4] = "CREATE TABLE IF NOT EXISTS spawns (seq INTEGER PRIMARY KEY AUTOINCREMENT, " +
		"parent_id TEXT NOT NULL COLLATE NOCASE, child_id TEXT NOT NULL COLLATE NOCASE, root_path TEXT NOT NULL, context TEXT NOT NULL)"
	st.Schema[5] = "CREATE TABLE IF NOT EXISTS trace (execution_id TEXT NOT NULL COLLATE NOCASE, " +
		"idx INTEGER NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (execution_id, idx))"
}

// timerPathNoCase compares timer paths without regard to case.
func timerPathNoCase(st *sqlstore.Statements) {
	// BUG: COLLATE NOCASE on path: scheduling "A" re-arms the timer at "a"
	// (which keeps its path), and cancelling "A" deletes "a".
	st.Schema[3] = "CREATE TABLE IF NOT EXISTS timers (execution_id TEXT NOT NULL, " +
		"path TEXT NOT NULL COLLATE NOCASE, fire_at REAL NOT NULL, PRIMARY KEY (execution_id, path))"
}

// outboxSeqReuse numbers the outbox by SQLite's rowid alone.
func outboxSeqReuse(st *sqlstore.Statements) {
	// BUG: no AUTOINCREMENT: a new emit takes max(seq) + 1, so once the
	// newest entry is acknowledged its seq is handed out again, and a late
	// ack of the old entry removes the new one.
	st.Schema[1] = "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, target_id TEXT, event TEXT NOT NULL)"
}

// dueTimersByExecution groups a sweep's timers by execution, as a relay
// firing each execution's timers together might want them.
func dueTimersByExecution(st *sqlstore.Statements) {
	// BUG: ordered by execution and path, not by fire_at: a timer due
	// later comes before one due sooner on another execution.
	st.DueTimers = "SELECT " + sqlstore.AsBlob("execution_id") + ", " + sqlstore.AsBlob("path") +
		", fire_at FROM timers WHERE fire_at <= ? ORDER BY execution_id, path"
}
