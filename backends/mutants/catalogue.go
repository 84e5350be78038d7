package mutants

import (
	"context"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Mutant is one entry of the catalogue.
type Mutant struct {
	// Name is what mutant:NAME opens.
	Name string
	// Breaks says in one sentence which clause of the contract the mutant
	// breaks; for the correct twin, what it is.
	Breaks string
	// Correct marks an entry that is not a mutant and must pass everything.
	Correct bool
	// OnFile says the mutant is run on a file of its own
	// (mutant:NAME?path=FILE): the scenarios that catch it need one.
	OnFile bool

	// statements swaps SQL of sqlstore.SQLite(); nil keeps the seed's.
	statements func(st *sqlstore.Statements)
	// wrap builds the store around the opened SQLite store; nil uses it
	// as it is.
	wrap func(ctx context.Context, b *base, cfg model.Config) (model.Store, error)
	// synchronous is the PRAGMA synchronous the store really runs with,
	// and claims the one it reports (Synchronous); "" keeps NORMAL.
	synchronous, claims string
}

// Catalogue returns every entry, mutants first in a fixed order, then the
// correct twin.
func Catalogue() []Mutant {
	return []Mutant{
		{
			Name:       "blind-write",
			Breaks:     "commit's compare-and-swap: the UPDATE lost its `AND version = ?`, so a commit from a stale version overwrites the row instead of failing with StoreConflict (a lost update).",
			statements: blindWrite,
		},
		{
			Name:   "version-guard",
			Breaks: "commit atomicity (a loser leaks nothing): the rqlite-style side-writes are guarded on `version = new` instead of `data = ours`, so a commit that lost its CAS to a writer at the same version still writes its outbox, dedupe, timer, spawn and trace rows.",
			wrap:   guardedWith(guarded.OnVersion),
		},
		{
			Name:   "split-commit",
			Breaks: "commit atomicity (the batch in the same transaction as the CAS): the execution row commits first and its side-writes in a second transaction, so other writers build on a version whose side-writes are missing and later versions' side-writes can land before earlier ones.",
			wrap:   wrapSplitCommit,
		},
		{
			Name:   "dedupe-before-cas",
			Breaks: "effect-once and atomicity: the processed-event marker is inserted before the CAS, outside its transaction, so a commit that conflicts still marks the event processed.",
			wrap:   wrapDedupeBeforeCAS,
		},
		{
			Name:       "trace-off-by-one",
			Breaks:     "trace ring cap: the trim deletes idx < max(idx) - trace_max instead of <=, so the ring keeps trace_max + 1 entries.",
			statements: traceOffByOne,
		},
		{
			Name:       "trace-index-reset",
			Breaks:     "trace indices are never reused or reset: read_trace numbers entries by their position in the ring, so after every trim the indices restart from 0.",
			statements: traceIndexReset,
		},
		{
			Name:       "stale-timer-sweep",
			Breaks:     "delete_timer deletes only if the row still holds fire_at: the DELETE ignores fire_at, so a stale sweep deletes a timer re-armed since it was read.",
			statements: staleTimerSweep,
		},
		{
			Name:       "due-timers-strict",
			Breaks:     "due_timers returns every timer with fire_at <= now: it selects fire_at < now, so a timer due exactly now is missed.",
			statements: dueTimersStrict,
		},
		{
			Name:       "due-timers-ignore-now",
			Breaks:     "due_timers returns only the timers with fire_at <= now: it binds now but never compares it, so every sweep is handed every timer, due or not.",
			statements: dueTimersIgnoreNow,
		},
		{
			Name:       "due-timers-unordered",
			Breaks:     "due_timers lists the timers due soonest first: it orders them by execution and path, so a timer due later on one execution comes before one due sooner on another.",
			statements: dueTimersByExecution,
		},
		{
			Name:       "outbox-unordered",
			Breaks:     "pending_outbox returns entries by ascending seq: it groups them by target (ORDER BY target_id, seq), so a later emit to one target comes before an earlier emit to another.",
			statements: outboxUnordered,
		},
		{
			Name:       "outbox-seq-reuse",
			Breaks:     "outbox seqs are never reused (each emit is pending once, and an ack removes only its own entry): the table lost AUTOINCREMENT, so after the newest entry is acknowledged the next emit gets its seq again.",
			statements: outboxSeqReuse,
		},
		{
			Name:       "seq-sharded",
			Breaks:     "queues in order across executions (the entries of a commit that returned before another was called are pending before the other's): seqs come from blocks of 100 that up to 4 sequence shards reserve, a commit numbering its entries from the first free shard, so one execution's entries still ascend (a shard below the execution's last seq reserves a new block) and one client at a time is numbered as AUTOINCREMENT numbers, but under concurrency a commit on a shard with a lower block has its entries listed before those of a commit of another execution that returned before it began.",
			statements: seqShardStatements,
			wrap:       wrapSeqSharded,
		},
		{
			Name:   "seq-before-tx",
			Breaks: "queues in order across executions (a seq is taken inside the commit's transaction, so the entries of a commit that took effect before another are pending before the other's): outbox and spawn seqs come from a sequence counter fetched before the transaction, one fetch in three coming back after 2 ms, so a commit whose fetch came back late takes effect after a commit of another execution that fetched later, its entries listed first; one execution's entries still ascend (its commits take a lock of the process before the fetch) and one client at a time is numbered in commit order.",
			wrap:   wrapSeqBeforeTx,
		},
		{
			Name:       "event-id-nocase",
			Breaks:     "effect-once per (execution, event id), ids compared exactly: processed_events.event_id is COLLATE NOCASE, so once ev1 is processed an event EV1 counts as processed too and its commit's marker is dropped.",
			statements: eventIDNoCase,
		},
		{
			Name:       "execution-id-nocase",
			Breaks:     "every table keyed by execution id, ids compared exactly: every column holding an execution id is COLLATE NOCASE (as MySQL's default collation makes every key), so once e1 exists an execution E1 is the same row, its create conflicts, and its events, timers and trace land on e1's.",
			statements: executionIDNoCase,
		},
		{
			Name:       "timer-path-nocase",
			Breaks:     "timers keyed by (execution id, path), paths compared exactly: timers.path is COLLATE NOCASE, so scheduling path A re-arms the timer at path a, and cancelling A deletes it.",
			statements: timerPathNoCase,
		},
		{
			Name:   "page-skip",
			Breaks: "list_executions pages through every row: the next cursor advances by the limit+1 rows fetched instead of the limit returned, so the row at each page boundary is never listed.",
			wrap:   wrapPageSkip,
		},
		{
			Name:   "page-prefix-skip",
			Breaks: "list_executions pages through every row: its cursor is the last id listed and the next page starts at that id followed by the byte 0xff, meant as the smallest string above it, which is above every id that extends it too, so after a page that ends at e1 the row e10 is never listed.",
			wrap:   wrapPagePrefixSkip,
		},
		{
			Name:   "version-not-restored",
			Breaks: "on a StoreConflict the caller's exe.version stays old: this store bumps it before the write and forgets to undo the bump when the CAS loses.",
			wrap:   wrapVersionNotRestored,
		},
		{
			Name:   "stale-read",
			Breaks: "linearizable reads: load and load_for_event are served from a copy of the database refreshed every 300 ms (a lagging follower in miniature), so a read can miss an acknowledged commit.",
			wrap:   wrapStaleRead,
		},
		{
			Name:       "read-check-write",
			Breaks:     "no lost update under concurrency: the CAS is a SELECT of the version followed by a separate unconditional write, outside one transaction, so two writers that both read version v both win; used by one client at a time it is correct.",
			statements: blindWrite,
			wrap:       wrapReadCheckWrite,
		},
		{
			Name:   "split-visible",
			Breaks: "atomic visibility (no reader sees part of a commit): the execution row and its side-writes commit in two transactions, 1 ms apart, under a lock every writer takes, so writers only ever see whole commits, but a reader between the two sees the new version without its dedupe marker, outbox entries, timers and trace step.",
			wrap:   wrapSplitVisible,
		},
		{
			Name:   "periodic-snapshot",
			Breaks: "durability at a process crash (every acknowledged commit survives the death of the process that made it): the store serves every call from a working copy and saves it to its file every 100 ms and on Close, so a process killed between two snapshots loses the commits it acknowledged since the last one.",
			wrap:   wrapPeriodicSnapshot,
			OnFile: true,
		},
		{
			Name:        "unsynced-full",
			Breaks:      "durability at power loss: it reports synchronous=FULL (every acknowledged commit survives a power cut) but runs with synchronous=OFF, so nothing it acknowledges is fsynced; a process crash cannot tell (the page cache survives it), a power cut can.",
			synchronous: "OFF",
			claims:      "FULL",
			OnFile:      true,
		},
		{
			Name:   "guarded-upsert",
			Breaks: "property 3 for a loser that brings the stored state: the rqlite seed's statement list (a guarded upsert, every side-write guarded on data = ours) run as one SQLite transaction cannot tell a stale commit of exactly the stored bytes from the winner, so that loser's outbox, dedupe, spawn and trace writes land although its compare-and-swap lost (the seed calls it benign double delivery; model/reference.go's Decision does not).",
			wrap:   guardedWith(guarded.OnData),
		},
	}
}

// Names returns the name of every entry, in catalogue order.
func Names() []string {
	var names []string
	for _, m := range Catalogue() {
		names = append(names, m.Name)
	}
	return names
}

// Lookup finds an entry by name; the error lists the known names.
func Lookup(name string) (Mutant, error) {
	for _, m := range Catalogue() {
		if m.Name == name {
			return m, nil
		}
	}
	return Mutant{}, fmt.Errorf("mutant: unknown mutant %q (known: %s)", name, strings.Join(Names(), ", "))
}
