package lagsim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// casOnReplica returns a store on the primary's database that decides the
// compare-and-swap on the replica: the row is written unconditionally, and
// the commit is refused only if the replica's version is not the one the
// caller commits from. It shares the primary's connections; the cluster
// closes them.
func casOnReplica(ctx context.Context, primary, reader *sqlstore.Store, cfg model.Config) (*sqlstore.Store, error) {
	st := sqlstore.SQLite()
	// BUG: no "AND version = ?": the primary overwrites the row at whatever
	// version it holds; (data, new version, id) are bound and the old
	// version is ignored.
	st.UpdateExecution = "UPDATE executions SET data = ?, version = ? WHERE id = ?"
	check := func(ctx context.Context, exe *model.Execution) error {
		// BUG: the version compared is the replica's, which may be stale:
		// two clients that loaded the same stale version both pass.
		var v int64
		err := reader.DB().QueryRowContext(ctx, st.SelectVersion, exe.ID).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows) && exe.Version == 0:
			return nil
		case errors.Is(err, sql.ErrNoRows):
			return &model.StoreConflict{ID: exe.ID, Expected: exe.Version}
		case err != nil:
			return fmt.Errorf("read the version from the replica: %w", err)
		case v != exe.Version:
			return &model.StoreConflict{ID: exe.ID, Expected: exe.Version, Found: &v}
		}
		return nil
	}
	return sqlstore.New(ctx, primary.DB(), cfg, sqlstore.Options{
		Name: Scheme + " primary (" + MutantCASOnReplica + ")", Statements: &st, SkipSchema: true,
		Hooks: sqlstore.Hooks{BeforeCommit: check},
	})
}
