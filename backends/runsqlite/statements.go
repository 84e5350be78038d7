package runsqlite

// Statements is the SQL a variant of the store may change: the schema and
// the statements that carry the contract's guarantees. Their named
// parameters are :id, :run, :worker, :token, :expires, :expected, :type,
// :data, :sequence, the decision's :kind, :actor, :reason and :payload, and
// :now (a time in runstore.TimeLayout). A correct store runs SQLite().
type Statements struct {
	// Schema creates the tables and indexes if they are missing.
	Schema []string
	// UpsertLease grants a claim's lease: it inserts the run's lease row
	// with token 1, or replaces holder and expiry of the existing row and
	// takes the next token, and returns the granted fencing_token.
	UpsertLease string
	// RenewLease extends a lease the fence still holds and returns the
	// lease row; no row returned means the fence is stale.
	RenewLease string
	// FenceCommit, FenceFinish and FenceAssert select a row iff the fence
	// holds the run's lease at :now, for commit_checkpoint, finish_claim
	// and assert_fencing_token.
	FenceCommit, FenceFinish, FenceAssert string
	// RunAt selects run :id if it is at version :expected: the version
	// check of every change made against an expected version.
	RunAt string
	// AppendEvent inserts run :run's next event (:type, :data, :now),
	// numbered one more than the run's last.
	AppendEvent string
	// NextQueued selects the run claim_next takes: the queued run of
	// highest priority, the oldest of those.
	NextQueued string
	// CheckpointNext selects two columns for run :run: whether :sequence is
	// the run's next checkpoint number (its last + 1, or 1), and that number.
	CheckpointNext string
	// ExpiredLeases selects the sweep's due leases at :now: run id, token,
	// run status and version of every active lease expired at :now, by
	// expiry then run id.
	ExpiredLeases string
	// DecideInterrupt writes a decision (:kind, :actor, :reason, :payload,
	// decided at :now) on interrupt :id iff it is still pending: a decided
	// interrupt matches no row.
	DecideInterrupt string
	// TimeOutRun moves run :run to timed_out at :now, with the next
	// version, iff it is waiting: what an interrupt's expiry does to it.
	TimeOutRun string
	// RequeueEndLease ends run :run's expired lease at :now when the sweep
	// puts the run back in the queue; InterruptEndLease ends its lease
	// when an interrupt makes it wait. The lease row stays, with its
	// token: the next claim takes the token after it.
	RequeueEndLease, InterruptEndLease string
	// ListAfter is list_runs' cursor condition: the rows after the run
	// whose created_at and id are its two positional arguments, in
	// (created_at, id) order.
	ListAfter string
}

// leaseColumns are the run_leases columns in runstore.LeaseRow order.
const leaseColumns = `id, run_id, holder_worker_id, expires_at, fencing_token, active, created_at, updated_at`

// fenceHolds is the condition of a lease the fence holds at :now.
const fenceHolds = `run_id = :run AND active = 1 AND holder_worker_id = :worker
	AND fencing_token = :token AND expires_at > :now`

// endLease ends run :run's lease at :now and keeps its row and token.
const endLease = `UPDATE run_leases SET active = 0, updated_at = :now WHERE run_id = :run`

// SQLite returns the seed's statements.
func SQLite() Statements {
	fence := `SELECT 1 FROM run_leases WHERE ` + fenceHolds
	return Statements{
		Schema: append(append([]string{}, schema...), oneActivePerSession),
		UpsertLease: `INSERT INTO run_leases(` + leaseColumns + `)
			VALUES (:id, :run, :worker, :expires, 1, 1, :now, :now)
			ON CONFLICT(run_id) DO UPDATE SET
				holder_worker_id = excluded.holder_worker_id,
				expires_at = excluded.expires_at,
				fencing_token = run_leases.fencing_token + 1,
				active = 1,
				updated_at = excluded.updated_at
			RETURNING fencing_token`,
		RenewLease: `UPDATE run_leases SET expires_at = :expires, updated_at = :now
			WHERE ` + fenceHolds + `
			RETURNING ` + leaseColumns,
		FenceCommit: fence,
		FenceFinish: fence,
		FenceAssert: fence,
		RunAt:       `SELECT ` + runColumns + ` FROM runs WHERE id = :id AND version = :expected`,
		AppendEvent: `INSERT INTO run_events(` + eventColumns + `)
			SELECT :run, COALESCE(MAX(sequence), 0) + 1, :type, :data, :now FROM run_events WHERE run_id = :run`,
		NextQueued: `SELECT ` + runColumns + ` FROM runs WHERE status = 'queued'
			ORDER BY priority DESC, created_at, id LIMIT 1`,
		CheckpointNext: `SELECT COALESCE(MAX(sequence), 0) + 1 = :sequence, COALESCE(MAX(sequence), 0) + 1
			FROM checkpoints WHERE run_id = :run`,
		ExpiredLeases: `SELECT l.run_id, l.fencing_token, r.status, r.version FROM run_leases l JOIN runs r ON r.id = l.run_id
			WHERE l.active = 1 AND l.expires_at <= :now ORDER BY l.expires_at, l.run_id`,
		DecideInterrupt: `UPDATE interrupts SET decision_kind = :kind, decision_actor_id = :actor, decision_reason = :reason,
			decision_payload_json = :payload, decided_at = :now WHERE id = :id AND decided_at IS NULL`,
		TimeOutRun: `UPDATE runs SET status = 'timed_out', updated_at = :now, version = version + 1
			WHERE id = :run AND status = 'waiting'`,
		RequeueEndLease:   endLease,
		InterruptEndLease: endLease,
		ListAfter:         `(created_at, id) > (?, ?)`,
	}
}

// oneActivePerSession is the seed's partial unique index: at most one run
// per session in an active status. create_run relies on it.
const oneActivePerSession = `CREATE UNIQUE INDEX IF NOT EXISTS runs_one_active_per_session_idx
	ON runs (session_id) WHERE status IN ('queued', 'running', 'waiting', 'needs_review')`

// schema is the seed's tables that the run-store contract needs, without the
// one-active-per-session index (see SQLite). Times are TEXT in
// runstore.TimeLayout, JSON columns canonical text.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS runs (
		id TEXT PRIMARY KEY,
		plan_id TEXT NOT NULL,
		revision_id TEXT NOT NULL,
		session_id TEXT NOT NULL,
		tenant_id TEXT NOT NULL,
		status TEXT NOT NULL,
		state_json TEXT NOT NULL,
		next_nodes_json TEXT NOT NULL,
		idempotency_key TEXT,
		context_json TEXT NOT NULL DEFAULT '{}',
		priority INTEGER NOT NULL DEFAULT 0,
		request_fingerprint TEXT NOT NULL,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		version INTEGER NOT NULL,
		UNIQUE (tenant_id, idempotency_key)
	)`,
	`CREATE INDEX IF NOT EXISTS runs_tenant_status_idx ON runs (tenant_id, status, created_at)`,
	`CREATE TABLE IF NOT EXISTS run_events (
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		sequence INTEGER NOT NULL,
		type TEXT NOT NULL,
		data_json TEXT NOT NULL,
		created_at TEXT NOT NULL,
		PRIMARY KEY (run_id, sequence)
	)`,
	`CREATE TABLE IF NOT EXISTS checkpoints (
		id TEXT PRIMARY KEY,
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		sequence INTEGER NOT NULL,
		plan_hash TEXT NOT NULL,
		state_json TEXT NOT NULL,
		next_nodes_json TEXT NOT NULL,
		pending_interrupts_json TEXT NOT NULL,
		effect_watermark INTEGER NOT NULL,
		created_at TEXT NOT NULL,
		UNIQUE (run_id, sequence)
	)`,
	`CREATE TABLE IF NOT EXISTS interrupts (
		id TEXT PRIMARY KEY,
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		kind TEXT NOT NULL,
		request_json TEXT NOT NULL,
		created_at TEXT NOT NULL,
		expires_at TEXT,
		decision_kind TEXT,
		decision_actor_id TEXT,
		decision_reason TEXT,
		decision_payload_json TEXT,
		decided_at TEXT
	)`,
	`CREATE INDEX IF NOT EXISTS interrupts_run_pending_idx ON interrupts (run_id, decided_at)`,
	`CREATE INDEX IF NOT EXISTS interrupts_expiry_idx ON interrupts (expires_at) WHERE decided_at IS NULL`,
	`CREATE TABLE IF NOT EXISTS run_leases (
		id TEXT PRIMARY KEY,
		run_id TEXT NOT NULL UNIQUE REFERENCES runs(id) ON DELETE CASCADE,
		holder_worker_id TEXT NOT NULL,
		expires_at TEXT NOT NULL,
		fencing_token INTEGER NOT NULL,
		active INTEGER NOT NULL,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS run_leases_expiry_idx ON run_leases (active, expires_at)`,
}
