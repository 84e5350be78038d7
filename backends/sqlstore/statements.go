package sqlstore

import (
	"strings"

	"github.com/storecheck/storecheck/model"
)

// Statements is every SQL text a Store runs, one field per statement, each
// with positional ? parameters in the order the field's comment gives. A Store
// never builds SQL of its own beyond joining the List fragments, so swapping a
// field changes exactly one step of the protocol.
type Statements struct {
	// Schema creates the six tables; run once when a store is opened.
	Schema []string

	// BeginWrite opens every write transaction (commit, append_trace, reset).
	BeginWrite string
	// BeginRead opens the read transaction a Dump runs in.
	BeginRead string
	// CommitTx and RollbackTx end a transaction.
	CommitTx, RollbackTx string

	// UpdateExecution is the compare-and-swap: (data, new version, id, old version).
	UpdateExecution string
	// SelectVersion reads the stored version after a lost CAS: (id).
	SelectVersion string
	// InsertExecution creates a new execution: (id, definition_id, data, version).
	InsertExecution string
	// InsertOutbox appends one emit: (target_id, event).
	InsertOutbox string
	// InsertProcessed records a processed event idempotently: (execution_id, event_id).
	InsertProcessed string
	// InsertSpawn appends one spawn intent: (parent_id, child_id, root_path, context).
	InsertSpawn string
	// UpsertTimer arms or re-arms a timer: (execution_id, path, fire_at).
	UpsertTimer string
	// CancelTimer deletes a timer whatever its fire_at: (execution_id, path).
	CancelTimer string
	// InsertTrace appends a trace step at max(idx)+1: (execution_id, execution_id, entry).
	InsertTrace string
	// TrimTrace keeps the newest trace_max steps: (execution_id, execution_id, trace_max).
	TrimTrace string

	// Load reads one execution: (id) -> data.
	Load string
	// LoadForEvent reads an execution and its dedupe flag in one query:
	// (id, id, event_id) -> data or NULL, 0/1.
	LoadForEvent string
	// ListSelect, ListByDefinition, ListByStatusIn, ListRootsOnly and ListPage
	// make list_executions: ListSelect [WHERE cond AND …] ListPage, where
	// ListByStatusIn is followed by "(?, ?, …)", one ? per status, and
	// ListPage takes (limit, offset). ListSelect yields
	// id, definition_id, version, status, outcome, active_path, parent_id.
	ListSelect, ListByDefinition, ListByStatusIn, ListRootsOnly, ListPage string
	// IsProcessed: (execution_id, event_id) -> a row when processed.
	IsProcessed string
	// PendingOutbox -> seq, target_id, event by ascending seq.
	PendingOutbox string
	// AckOutbox: (seq).
	AckOutbox string
	// PendingSpawns -> seq, parent_id, child_id, root_path, context by ascending seq.
	PendingSpawns string
	// AckSpawn: (seq).
	AckSpawn string
	// DueTimers: (now) -> execution_id, path, fire_at, soonest first.
	DueTimers string
	// DeleteTimer deletes a timer only if it still holds fire_at: (execution_id, path, fire_at).
	DeleteTimer string
	// ReadTrace: (execution_id) -> idx, entry by ascending idx.
	ReadTrace string

	// DumpExecutions, DumpOutbox, DumpProcessed, DumpTimers, DumpSpawns and
	// DumpTrace read whole tables, columns in model.Dump's row order.
	DumpExecutions, DumpOutbox, DumpProcessed, DumpTimers, DumpSpawns, DumpTrace string
	// Reset empties the six tables and the AUTOINCREMENT counters, in one
	// write transaction.
	Reset []string
}

// Projection wraps a text expression in a SELECT list.
type Projection func(expr string) string

// AsBlob selects a text expression as its exact bytes. The libSQL driver
// returns any TEXT that parses as a timestamp as a time.Time; a BLOB it
// returns untouched. NULL stays NULL.
func AsBlob(expr string) string { return "CAST(" + expr + " AS BLOB)" }

// AsIs selects a text expression unchanged, for drivers without that quirk.
func AsIs(expr string) string { return expr }

// SQLite returns the seed's statements, with text columns selected AsBlob.
func SQLite() Statements { return NewStatements(AsBlob) }

// NewStatements returns the seed's statements, with every text column of every
// SELECT list wrapped by t.
func NewStatements(t Projection) Statements {
	return Statements{
		Schema: []string{
			"CREATE TABLE IF NOT EXISTS executions (id TEXT PRIMARY KEY, definition_id TEXT NOT NULL, data TEXT NOT NULL, version INTEGER NOT NULL)",
			"CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, target_id TEXT, event TEXT NOT NULL)",
			"CREATE TABLE IF NOT EXISTS processed_events (execution_id TEXT NOT NULL, event_id TEXT NOT NULL, PRIMARY KEY (execution_id, event_id))",
			"CREATE TABLE IF NOT EXISTS timers (execution_id TEXT NOT NULL, path TEXT NOT NULL, fire_at REAL NOT NULL, PRIMARY KEY (execution_id, path))",
			"CREATE TABLE IF NOT EXISTS spawns (seq INTEGER PRIMARY KEY AUTOINCREMENT, parent_id TEXT NOT NULL, child_id TEXT NOT NULL, root_path TEXT NOT NULL, context TEXT NOT NULL)",
			"CREATE TABLE IF NOT EXISTS trace (execution_id TEXT NOT NULL, idx INTEGER NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (execution_id, idx))",
		},

		BeginWrite: "BEGIN IMMEDIATE",
		BeginRead:  "BEGIN",
		CommitTx:   "COMMIT",
		RollbackTx: "ROLLBACK",

		UpdateExecution: "UPDATE executions SET data = ?, version = ? WHERE id = ? AND version = ?",
		SelectVersion:   "SELECT version FROM executions WHERE id = ?",
		InsertExecution: "INSERT INTO executions (id, definition_id, data, version) VALUES (?, ?, ?, ?)",
		InsertOutbox:    "INSERT INTO outbox (target_id, event) VALUES (?, ?)",
		InsertProcessed: "INSERT OR IGNORE INTO processed_events (execution_id, event_id) VALUES (?, ?)",
		InsertSpawn:     "INSERT INTO spawns (parent_id, child_id, root_path, context) VALUES (?, ?, ?, ?)",
		UpsertTimer: "INSERT INTO timers (execution_id, path, fire_at) VALUES (?, ?, ?) " +
			"ON CONFLICT(execution_id, path) DO UPDATE SET fire_at = excluded.fire_at",
		CancelTimer: "DELETE FROM timers WHERE execution_id = ? AND path = ?",
		InsertTrace: "INSERT INTO trace (execution_id, idx, entry) " +
			"SELECT ?, COALESCE((SELECT MAX(idx) FROM trace WHERE execution_id = ?), -1) + 1, ?",
		TrimTrace: "DELETE FROM trace WHERE execution_id = ? AND idx <= " +
			"(SELECT MAX(idx) FROM trace WHERE execution_id = ?) - ?",

		Load: "SELECT " + t("data") + " FROM executions WHERE id = ?",
		LoadForEvent: "SELECT " + t("(SELECT data FROM executions WHERE id = ?)") + ", " +
			"EXISTS(SELECT 1 FROM processed_events WHERE execution_id = ? AND event_id = ?)",
		ListSelect: "SELECT " + t("id") + ", " + t("definition_id") + ", version, " +
			t("json_extract(data,'$.status')") + ", " + t("json_extract(data,'$.outcome')") + ", " +
			t("json_extract(data,'$.active_path')") + ", " + t("json_extract(data,'$.parent_id')") +
			" FROM executions",
		ListByDefinition: "definition_id = ?",
		ListByStatusIn:   "json_extract(data,'$.status') IN ",
		ListRootsOnly:    "json_extract(data,'$.parent_id') IS NULL",
		ListPage:         "ORDER BY id LIMIT ? OFFSET ?",
		IsProcessed:      "SELECT 1 FROM processed_events WHERE execution_id = ? AND event_id = ?",
		PendingOutbox:    "SELECT seq, " + t("target_id") + ", " + t("event") + " FROM outbox ORDER BY seq",
		AckOutbox:        "DELETE FROM outbox WHERE seq = ?",
		PendingSpawns: "SELECT seq, " + t("parent_id") + ", " + t("child_id") + ", " + t("root_path") + ", " +
			t("context") + " FROM spawns ORDER BY seq",
		AckSpawn:    "DELETE FROM spawns WHERE seq = ?",
		DueTimers:   "SELECT " + t("execution_id") + ", " + t("path") + ", fire_at FROM timers WHERE fire_at <= ? ORDER BY fire_at",
		DeleteTimer: "DELETE FROM timers WHERE execution_id = ? AND path = ? AND fire_at = ?",
		ReadTrace:   "SELECT idx, " + t("entry") + " FROM trace WHERE execution_id = ? ORDER BY idx",

		DumpExecutions: "SELECT " + t("id") + ", " + t("definition_id") + ", " + t("data") + ", version FROM executions",
		DumpOutbox:     "SELECT seq, " + t("target_id") + ", " + t("event") + " FROM outbox",
		DumpProcessed:  "SELECT " + t("execution_id") + ", " + t("event_id") + " FROM processed_events",
		DumpTimers:     "SELECT " + t("execution_id") + ", " + t("path") + ", fire_at FROM timers",
		DumpSpawns: "SELECT seq, " + t("parent_id") + ", " + t("child_id") + ", " + t("root_path") + ", " +
			t("context") + " FROM spawns",
		DumpTrace: "SELECT " + t("execution_id") + ", idx, " + t("entry") + " FROM trace",
		Reset: []string{
			"DELETE FROM executions",
			"DELETE FROM outbox",
			"DELETE FROM processed_events",
			"DELETE FROM timers",
			"DELETE FROM spawns",
			"DELETE FROM trace",
			// AUTOINCREMENT keeps its high-water marks here; without this a
			// reset store would not number its outbox and spawns like a new one.
			"DELETE FROM sqlite_sequence",
		},
	}
}

// ListQuery joins the List fragments for f into the list_executions query
// of the page at offset off, and returns it with its arguments.
func (st Statements) ListQuery(f model.ListFilter, off int) (string, []any) {
	var where []string
	var args []any
	if f.DefinitionID != nil {
		where = append(where, st.ListByDefinition)
		args = append(args, *f.DefinitionID)
	}
	if len(f.Statuses) > 0 {
		where = append(where, st.ListByStatusIn+"("+strings.TrimSuffix(strings.Repeat("?, ", len(f.Statuses)), ", ")+")")
		for _, status := range f.Statuses {
			args = append(args, status)
		}
	}
	if f.RootsOnly {
		where = append(where, st.ListRootsOnly)
	}
	q := st.ListSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " " + st.ListPage, append(args, int64(f.Limit)+1, int64(off))
}
