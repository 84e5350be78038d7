package rqlite

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestCommitStatements pins the exact statement list a commit sends: SQL
// text, parameter order and the seed's order of side-writes, every
// side-write guarded on the row holding this commit's exact data.
func TestCommitStatements(t *testing.T) {
	exe := &model.Execution{ID: "e1", DefinitionID: "d", Version: 3, Status: "running", ActivePath: "a"}
	b := model.Batch{
		Emits:            []model.Emit{{TargetID: model.Ptr("e2"), Event: model.Event{ID: "ev1", Name: "go"}}, {Event: model.Event{Name: "log"}}},
		ProcessedEventID: model.Ptr("p1"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "t", FireAt: 12.5}, {Action: model.TimerCancel, Path: "u"}},
		Spawns:           []model.Spawn{{ChildID: "c1", RootPath: "r", Context: json.RawMessage(`{"b":1,"a":2}`)}},
		Trace:            json.RawMessage(`{"step":1}`),
	}
	got, err := CommitStatements(exe, b, 5)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := model.EncodeNext(exe)
	guard := " EXISTS (SELECT 1 FROM executions WHERE id = ? AND data = ?)"
	want := []Statement{
		{SQL: "INSERT INTO executions (id, definition_id, data, version) " +
			"SELECT ?, ?, ?, ? WHERE ? = 0 OR EXISTS (SELECT 1 FROM executions WHERE id = ?) " +
			"ON CONFLICT(id) DO UPDATE SET data = excluded.data, version = excluded.version " +
			"WHERE executions.version = ?",
			Args: []any{"e1", "d", data, int64(4), int64(3), "e1", int64(3)}},
		{SQL: "INSERT INTO outbox (target_id, event) SELECT ?, ? WHERE" + guard,
			Args: []any{"e2", `{"id":"ev1","name":"go"}`, "e1", data}},
		{SQL: "INSERT INTO outbox (target_id, event) SELECT ?, ? WHERE" + guard,
			Args: []any{nil, `{"name":"log"}`, "e1", data}},
		{SQL: "INSERT OR IGNORE INTO processed_events (execution_id, event_id) SELECT ?, ? WHERE" + guard,
			Args: []any{"e1", "p1", "e1", data}},
		{SQL: "DELETE FROM timers WHERE execution_id = ? AND path = ? AND" + guard,
			Args: []any{"e1", "t", "e1", data}},
		{SQL: "INSERT INTO timers (execution_id, path, fire_at) SELECT ?, ?, ? WHERE" + guard,
			Args: []any{"e1", "t", 12.5, "e1", data}},
		{SQL: "DELETE FROM timers WHERE execution_id = ? AND path = ? AND" + guard,
			Args: []any{"e1", "u", "e1", data}},
		{SQL: "INSERT INTO spawns (parent_id, child_id, root_path, context) SELECT ?, ?, ?, ? WHERE" + guard,
			Args: []any{"e1", "c1", "r", `{"a":2,"b":1}`, "e1", data}},
		{SQL: "INSERT INTO trace (execution_id, idx, entry) " +
			"SELECT ?, COALESCE((SELECT MAX(idx) FROM trace WHERE execution_id = ?), -1) + 1, ? WHERE" + guard,
			Args: []any{"e1", "e1", `{"step":1}`, "e1", data}},
		{SQL: "DELETE FROM trace WHERE execution_id = ? AND idx <= " +
			"(SELECT MAX(idx) FROM trace WHERE execution_id = ?) - ? AND" + guard,
			Args: []any{"e1", "e1", 5, "e1", data}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d statements, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].SQL != want[i].SQL {
			t.Errorf("statement %d:\n got %s\nwant %s", i, got[i].SQL, want[i].SQL)
		}
		if !reflect.DeepEqual(got[i].Args, want[i].Args) {
			t.Errorf("statement %d args:\n got %#v\nwant %#v", i, got[i].Args, want[i].Args)
		}
	}
	// The wire form is [sql, args…], as rqlite's HTTP API takes it.
	if w := got[0].Wire(); w[0] != want[0].SQL || len(w) != 1+len(want[0].Args) {
		t.Errorf("wire form %v", w)
	}
	// No trim without a cap.
	got, _ = CommitStatements(exe, b, 0)
	if last := got[len(got)-1].SQL; !strings.HasPrefix(last, "INSERT INTO trace") {
		t.Errorf("unbounded ring still trims: %s", last)
	}
}

// TestLosingCommitWritesNothing runs a losing commit's full list in the
// local transaction and checks it wrote nothing, and that a commit with
// the same version but other data (the seed's warning case) cannot satisfy
// the guard.
func TestLosingCommitWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openLocal(t, model.DefaultConfig())
	defer s.Close()
	a := &model.Execution{ID: "x", DefinitionID: "d", Status: "s", ActivePath: "a"}
	if err := s.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	winner, loser := a.Clone(), a.Clone()
	winner.ActivePath, loser.ActivePath = "won", "lost"
	if err := s.Commit(ctx, winner, model.Batch{}); err != nil {
		t.Fatal(err)
	}
	b := model.Batch{
		Emits:            []model.Emit{{Event: model.Event{ID: "leak", Name: "leak"}}},
		ProcessedEventID: model.Ptr("leak"),
		Timers:           []model.TimerOp{{Action: model.TimerSchedule, Path: "p", FireAt: 1}},
		Spawns:           []model.Spawn{{ChildID: "c", RootPath: "r"}},
		Trace:            json.RawMessage(`{"leak":true}`),
	}
	err := s.Commit(ctx, loser, b)
	c, ok := model.AsConflict(err)
	if !ok || c.Expected != 1 || c.Found == nil || *c.Found != 2 || loser.Version != 1 {
		t.Fatalf("losing commit: %v, version %d; want a conflict expecting 1, found 2", err, loser.Version)
	}
	d, err := s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Outbox)+len(d.Processed)+len(d.Timers)+len(d.Spawns)+len(d.Trace) != 0 {
		t.Errorf("a losing commit leaked side-writes: %+v", d)
	}
	// A commit of an absent execution from a version other than 0 is a
	// conflict with found = none, and inserts nothing.
	err = s.Commit(ctx, &model.Execution{ID: "ghost", DefinitionID: "d", Version: 4}, model.Batch{})
	if c, ok := model.AsConflict(err); !ok || c.Found != nil {
		t.Errorf("commit of an absent row from version 4: %v", err)
	}
	if g, err := s.Load(ctx, "ghost"); err != nil || g != nil {
		t.Errorf("ghost row: %v, %v", g, err)
	}
}

// TestSeedUpsertInsertsAbsentRowAtAnyVersion documents why the CAS is the
// SELECT form of package guarded rather than the seed's literal
// INSERT … VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE … WHERE
// executions.version = ? with (id, definition_id, data, new, old): for an
// absent row the VALUES form inserts whatever old is, where the contract
// wants a conflict with found = none unless old is 0.
func TestSeedUpsertInsertsAbsentRowAtAnyVersion(t *testing.T) {
	const seedCAS = "INSERT INTO executions (id, definition_id, data, version) VALUES (?, ?, ?, ?) " +
		"ON CONFLICT(id) DO UPDATE SET data = excluded.data, version = excluded.version WHERE executions.version = ?"
	ctx := context.Background()
	s := openLocal(t, model.DefaultConfig())
	defer s.Close()
	res, err := s.exec.Execute(ctx, []Statement{{SQL: seedCAS, Args: []any{"ghost", "d", `{"id":"ghost"}`, int64(5), int64(4)}}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	if res[0].RowsAffected != 1 {
		t.Fatalf("the seed's form affected %d rows for an absent row at old=4; the divergence this test documents is gone", res[0].RowsAffected)
	}
	// Ours, for the same commit: no row affected, so a conflict.
	stmts, err := CommitStatements(&model.Execution{ID: "ghost2", DefinitionID: "d", Version: 4}, model.Batch{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err = s.exec.Execute(ctx, stmts)
	if err != nil || res[0].RowsAffected != 0 {
		t.Fatalf("guarded CAS for an absent row at old=4: %v rows, %v", res[0].RowsAffected, err)
	}
}

// TestSeedGuardLeak pins the one case where the seed's data guard and the
// contract part: a stale commit whose data is byte-identical to the stored
// row (the same execution re-committed from the version before) loses its
// CAS, yet its side-writes find "our exact data" in the row and land. The
// seed calls this double delivery benign; the contract's atomicity says a
// loser writes nothing. GuardPreState writes nothing.
func TestSeedGuardLeak(t *testing.T) {
	for _, c := range []struct {
		guard Guard
		leaks bool
	}{{GuardData, true}, {GuardPreState, false}} {
		t.Run(string(c.guard), func(t *testing.T) {
			ctx := context.Background()
			s := openLocal(t, model.DefaultConfig())
			defer s.Close()
			s.SetGuard(c.guard)
			exe := &model.Execution{ID: "e", DefinitionID: "d", Status: "s", ActivePath: "a"}
			if err := s.Save(ctx, exe.Clone()); err != nil {
				t.Fatal(err)
			}
			stale := exe.Clone() // still at version 0: identical bytes at version 1
			err := s.Commit(ctx, stale, model.Batch{Emits: []model.Emit{{Event: model.Event{ID: "x", Name: "again"}}}, Trace: json.RawMessage(`{"n":0}`)})
			if _, ok := model.AsConflict(err); !ok {
				t.Fatalf("stale commit: %v, want a conflict", err)
			}
			d, err := s.Dump(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if leaked := len(d.Outbox)+len(d.Trace) > 0; leaked != c.leaks {
				t.Errorf("guard %s: loser's side-writes landed = %v, want %v (%+v)", c.guard, leaked, c.leaks, d)
			}
		})
	}
}

// TestPreStateStatements pins the strict list's shape: side-writes guarded
// on the row's state before the commit, the guarded upsert last.
func TestPreStateStatements(t *testing.T) {
	exe := &model.Execution{ID: "e1", DefinitionID: "d", Version: 3}
	got, cas, err := commitList(exe, model.Batch{Emits: []model.Emit{{Event: model.Event{Name: "go"}}},
		Timers: []model.TimerOp{{Action: model.TimerCancel, Path: "t"}}}, 0, GuardPreState)
	if err != nil {
		t.Fatal(err)
	}
	pre := "((? = 0 AND NOT EXISTS (SELECT 1 FROM executions WHERE id = ?)) OR EXISTS (SELECT 1 FROM executions WHERE id = ? AND version = ?))"
	if cas != 2 || len(got) != 3 || !strings.HasPrefix(got[2].SQL, "INSERT INTO executions") {
		t.Fatalf("CAS at %d of %d: %+v", cas, len(got), got)
	}
	if got[0].SQL != "INSERT INTO outbox (target_id, event) SELECT ?, ? WHERE "+pre ||
		!reflect.DeepEqual(got[0].Args, []any{nil, `{"name":"go"}`, int64(3), "e1", "e1", int64(3)}) {
		t.Errorf("outbox: %s %#v", got[0].SQL, got[0].Args)
	}
	if got[1].SQL != "DELETE FROM timers WHERE execution_id = ? AND path = ? AND "+pre {
		t.Errorf("timer: %s", got[1].SQL)
	}
}
