package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// TestSwappedStatement checks that a store runs the statements it is given:
// with the version check taken out of the CAS, a stale save wins.
func TestSwappedStatement(t *testing.T) {
	ctx := context.Background()
	st := sqlstore.SQLite()
	st.UpdateExecution = "UPDATE executions SET data = ?, version = ? WHERE id = ? AND (version = ? OR 1)"
	s := open(t, WithStoreOptions(sqlstore.Options{Name: "no-cas", Statements: &st}))
	if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, &model.Execution{ID: "a", Version: 7}); err != nil {
		t.Fatalf("the mutant refused a stale save: %v", err)
	}
}

// TestBeforeCommitHook checks that a failing hook rolls the whole commit
// back and leaves the version alone.
func TestBeforeCommitHook(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	s := open(t, WithStoreOptions(sqlstore.Options{Hooks: sqlstore.Hooks{
		BeforeCommit: func(context.Context, *model.Execution) error { return boom },
	}}))
	exe := &model.Execution{ID: "a"}
	err := s.Commit(ctx, exe, model.Batch{Emits: []model.Emit{{Event: model.Event{Name: "x"}}}})
	if !errors.Is(err, boom) || !errors.Is(err, model.ErrNotApplied) || exe.Version != 0 {
		t.Fatalf("commit = %v, version %d; want boom, not applied, and 0", err, exe.Version)
	}
	d, err := s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Executions)+len(d.Outbox) != 0 {
		t.Errorf("a rolled-back commit left rows: %+v", d)
	}
}
