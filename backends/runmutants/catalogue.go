// Package runmutants is a catalogue of deliberately broken run stores: the
// SQLite run store (backends/runsqlite) with one statement changed, each
// breaking one clause of the run-store contract. The checks must catch every
// one; a CI test proves they do. Open one as runs+mutant:NAME.
package runmutants

import (
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/backends/runsqlite"
)

// Mutant is one entry of the catalogue.
type Mutant struct {
	// Name is what runs+mutant:NAME opens.
	Name string
	// Breaks says in one sentence which clause of the contract it breaks.
	Breaks string
	// edits replace text in the correct statements; each old text must be
	// found, so that a mutant never silently becomes the correct store.
	edits []edit
	// synchronous is the PRAGMA synchronous the store really runs with,
	// and claims the one it reports (Synchronous); "" keeps NORMAL.
	synchronous, claims string
	// conformanceOnly says only runs-conformance is held to catch the
	// mutant: its bug shows at the instant a lease or an interrupt expires,
	// in a page of list_runs, or in a session whose run is in review, which
	// runs-conformance draws and lease-stall was not seen to reach (it passed
	// the first four on seeds 1–3, and moves no run to review).
	conformanceOnly bool
}

// ConformanceOnly says only runs-conformance is held to catch the mutant
// (docs/DETECTION.md, "A second blind hunt").
func (m Mutant) ConformanceOnly() bool { return m.conformanceOnly }

// PowerLossOnly says the mutant breaks durability at power loss only: its
// statements are the correct ones, so the run-store suites and lease-stall
// pass it, and only the power-loss scenario can catch it.
func (m Mutant) PowerLossOnly() bool { return m.claims != "" }

// edit replaces old with new in the statement field picks.
type edit struct {
	field    func(*runsqlite.Statements) *string
	old, new string
}

// Catalogue returns every mutant, in a fixed order.
func Catalogue() []Mutant {
	return []Mutant{
		{
			Name:   "claim-keeps-token",
			Breaks: "claim_next's fencing token is the previous token + 1: the lease upsert keeps the old token when it replaces the holder, so a re-claimed run's new and old holders share one token.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.UpsertLease },
				old: "fencing_token = run_leases.fencing_token + 1", new: "fencing_token = run_leases.fencing_token"}},
		},
		{
			Name:   "renew-expired",
			Breaks: "renew_lease requires an unexpired lease: the guarded UPDATE lost its `expires_at > :now`, so a worker that stalled past its lease renews it as if nothing happened, until a sweep deactivates it.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.RenewLease },
				old: "AND expires_at > :now", new: ""}},
		},
		{
			Name:   "finish-ignores-token",
			Breaks: "finish_claim requires the current fencing token: its lease check lost `fencing_token = :token`, so a stale incarnation of the holder (same worker id, older token) finishes a run that was claimed again.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.FenceFinish },
				old: "AND fencing_token = :token", new: ""}},
		},
		{
			Name:   "two-active-per-session",
			Breaks: "at most one active run per session: the partial unique index on runs(session_id) is missing, so create_run admits a second queued run into a session that has one.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.Schema[len(s.Schema)-1] },
				old: "CREATE UNIQUE INDEX IF NOT EXISTS runs_one_active_per_session_idx", new: "CREATE INDEX IF NOT EXISTS runs_one_active_per_session_idx"}},
		},
		{
			Name:   "idempotency-key-nocase",
			Breaks: "create_run is idempotent per (tenant, idempotency key), keys compared exactly: the key column is COLLATE NOCASE, so a request under key K1 is answered with the run created under k1 (or refused as a conflicting reuse) instead of creating its own run.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.Schema[1] },
				old: "idempotency_key TEXT,", new: "idempotency_key TEXT COLLATE NOCASE,"}},
		},
		{
			Name:   "version-unchecked",
			Breaks: "a change against a stale expected version is a conflict: the run lookup lost its `AND version = :expected`, so transition_run, commit_checkpoint, finish_claim and the interrupt calls apply to whatever version the run is at, overwriting changes their caller never saw.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.RunAt },
				old: " AND version = :expected", new: ""}},
		},
		{
			Name:   "event-seq-global",
			Breaks: "a run's events are numbered 1, 2, 3, … without gaps: the next number is the largest in the whole table + 1, as a table-wide serial column gives, so a run's events skip the numbers other runs' events took.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.AppendEvent },
				old: "FROM run_events WHERE run_id = :run", new: "FROM run_events"}},
		},
		{
			Name:   "claim-by-age",
			Breaks: "claim_next takes the highest-priority, oldest queued run: its query orders by creation time only, so an older run of lower priority is claimed before a newer urgent one.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.NextQueued },
				old: "ORDER BY priority DESC, created_at, id", new: "ORDER BY created_at, id"}},
		},
		{
			Name:   "requeue-deletes-lease",
			Breaks: "requeue_expired_leases puts a run back in the queue and the next claim's token is one more than the run's previous one: the sweep deletes the expired lease instead of ending it, so the next claim starts again at token 1, the token of the holder that stalled.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.RequeueEndLease },
				old: "UPDATE run_leases SET active = 0, updated_at = :now WHERE", new: "DELETE FROM run_leases WHERE"}},
		},
		{
			Name:   "interrupt-keeps-lease",
			Breaks: "creating an interrupt makes the run wait, and its holder loses the lease: create_interrupt leaves the lease active, so the holder never sees the interrupt: it renews and passes the fence on a waiting run, and can finish it (queued, failed, cancelled) before anyone decides the interrupt.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.InterruptEndLease },
				old: "SET active = 0, updated_at", new: "SET updated_at"}},
		},
		{
			Name:   "checkpoint-seq-gaps",
			Breaks: "a run's checkpoints are numbered 1, 2, 3, … without gaps: the store checks only that a checkpoint's sequence comes after the run's last, not that it is the next, so a caller that skips a number leaves a gap.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.CheckpointNext },
				old: "COALESCE(MAX(sequence), 0) + 1 = :sequence", new: ":sequence > COALESCE(MAX(sequence), 0)"}},
		},
		{
			Name:   "requeue-grace",
			Breaks: "requeue_expired_leases puts runs with expired leases back in the queue: the sweep waits 5 s past a lease's expiry, a grace for clock skew that the fence does not give, so for those 5 s a swept run stays running and nobody may work on it.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.ExpiredLeases },
				old: "l.expires_at <= :now", new: "l.expires_at <= strftime('%Y-%m-%dT%H:%M:%f000000Z', :now, '-5 seconds')"}},
		},
		{
			Name:   "interrupt-decided-twice",
			Breaks: "an interrupt is decided once: decide_interrupt's guarded write lost `AND decided_at IS NULL`, so a second decision overwrites the first and queues the run again, even while it waits on another interrupt.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.DecideInterrupt },
				old: " AND decided_at IS NULL", new: ""}},
		},
		{
			Name:   "expiry-requeues-run",
			Breaks: "an overdue interrupt expires, rejected, and times its run out: the expiry queues the waiting run as a decision does, so a worker resumes a run whose approval never came.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.TimeOutRun },
				old: "SET status = 'timed_out'", new: "SET status = 'queued'"}},
		},
		{
			Name:   "fence-at-expiry",
			Breaks: "renew_lease, commit_checkpoint and finish_claim need an unexpired lease, one whose expiry is after the call's now: the fence compares `expires_at >= :now`, so at the instant its lease expires a holder still renews, checkpoints and finishes, while a sweep at that instant requeues the run.",
			edits: []edit{
				{field: func(s *runsqlite.Statements) *string { return &s.RenewLease }, old: "expires_at > :now", new: "expires_at >= :now"},
				{field: func(s *runsqlite.Statements) *string { return &s.FenceCommit }, old: "expires_at > :now", new: "expires_at >= :now"},
				{field: func(s *runsqlite.Statements) *string { return &s.FenceFinish }, old: "expires_at > :now", new: "expires_at >= :now"},
				{field: func(s *runsqlite.Statements) *string { return &s.FenceAssert }, old: "expires_at > :now", new: "expires_at >= :now"},
			},
			conformanceOnly: true,
		},
		{
			Name:   "requeue-strict-expiry",
			Breaks: "requeue_expired_leases takes every running run whose lease expired at or before the sweep's now: it selects `expires_at < :now`, so a sweep at the instant a lease expires returns without its run, which the fence already refuses to its holder.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.ExpiredLeases },
				old: "l.expires_at <= :now", new: "l.expires_at < :now"}},
			conformanceOnly: true,
		},
		{
			Name:   "expiry-times-out-any",
			Breaks: "an overdue interrupt times its run out only if the run still waits (one queued, cancelled or failed meanwhile keeps its status): the expiry's UPDATE lost `AND status = 'waiting'`, so it times out a run a caller had already queued, and turns a cancelled or failed run into timed_out.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.TimeOutRun },
				old: " AND status = 'waiting'", new: ""}},
			conformanceOnly: true,
		},
		{
			Name:   "list-after-conjunction",
			Breaks: "list_runs pages in (created_at, id) order: the cursor condition is `created_at > ? AND id > ?` instead of the tuple comparison, so the page after a run leaves out the runs created at the same instant (and those created later under a smaller id).",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.ListAfter },
				old: "(created_at, id) > (?, ?)", new: "created_at > ? AND id > ?"}},
			conformanceOnly: true,
		},
		{
			Name:   "active-excludes-review",
			Breaks: "a session has at most one active run, needs_review included: the partial unique index create_run relies on lists queued, running and waiting only, so a session whose run waits for review admits a second active run.",
			edits: []edit{{field: func(s *runsqlite.Statements) *string { return &s.Schema[len(s.Schema)-1] },
				old: "'waiting', 'needs_review')", new: "'waiting')"}},
			conformanceOnly: true,
		},
		{
			Name:        "unsynced-full",
			Breaks:      "durability at power loss: it reports synchronous=FULL (every acknowledged write survives a power cut) but runs with synchronous=OFF, so nothing it acknowledges is fsynced; only a power cut shows it.",
			synchronous: "OFF",
			claims:      "FULL",
		},
	}
}

// Statements returns the mutant's statements, or an error if an edit no
// longer finds its text in the correct ones.
func (m Mutant) Statements() (runsqlite.Statements, error) {
	st := runsqlite.SQLite()
	st.Schema = append([]string(nil), st.Schema...)
	for _, e := range m.edits {
		p := e.field(&st)
		if !strings.Contains(*p, e.old) {
			return st, fmt.Errorf("%s: %s: the correct statement no longer contains %q", Scheme, m.Name, e.old)
		}
		*p = strings.Replace(*p, e.old, e.new, 1)
	}
	return st, nil
}

// Names returns every mutant's name, in catalogue order.
func Names() []string {
	var names []string
	for _, m := range Catalogue() {
		names = append(names, m.Name)
	}
	return names
}

// Lookup finds a mutant by name; the error lists the known names.
func Lookup(name string) (Mutant, error) {
	for _, m := range Catalogue() {
		if m.Name == name {
			return m, nil
		}
	}
	return Mutant{}, fmt.Errorf("%s: unknown mutant %q (known: %s)", Scheme, name, strings.Join(Names(), ", "))
}
