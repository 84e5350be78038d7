package mutants

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// Replica mutants: deliberately broken writers of a libsql+replica client
// (URL parameter mutant=NAME). Each gets the client's store on its
// embedded replica (whose transactions libSQL runs on the primary), the
// replica's database (whose plain reads are served from the local, maybe
// stale, copy) and a way to open the replica's own file for writing, and
// returns the store the client writes through.
type replicaMutant struct {
	breaks string
	writer func(ctx context.Context, local *sqlstore.Store, db *sql.DB, file OpenFile, cfg model.Config) (model.Store, error)
}

// OpenFile opens a store on the replica's own file, read-write, on a local
// connection of libSQL's (nothing delegated); the cluster closes it.
type OpenFile = func(ctx context.Context) (*sqlstore.Store, error)

// The replica mutants.
const (
	ReplicaCASOnReplica  = "cas-on-replica"
	ReplicaStaleConflict = "stale-conflict"
	ReplicaWriteLocal    = "write-local"
)

func replicaMutants() map[string]replicaMutant {
	return map[string]replicaMutant{
		ReplicaCASOnReplica: {
			breaks: "the compare-and-swap is decided on the replica: the version is read from the local copy and the row written without `AND version = ?`, so two clients that loaded the same stale version both win (a lost update)",
			writer: casOnReplica,
		},
		ReplicaWriteLocal: {
			breaks: "every write goes to the primary: the client's writes are applied to its replica's own file, on a local connection, instead of being delegated (a write routed as a read, as a router that misclassifies a statement sends it), so the primary never has them",
			writer: writeLocal,
		},
		ReplicaStaleConflict: {
			breaks: "a conflict reports the replica's version as the one found, not the primary's: a stale Found sends the caller back to a version that was never current when it lost",
			writer: staleConflict,
		},
	}
}

// ReplicaNames lists the replica mutants.
func ReplicaNames() []string { return names(replicaMutants()) }

// ReplicaBreaks says what replica mutant name breaks, or an error naming
// the known ones.
func ReplicaBreaks(name string) (string, error) {
	m, err := find(replicaMutants(), "replica mutant", name)
	return m.breaks, err
}

// ReplicaWriter returns the writer of replica mutant name.
func ReplicaWriter(name string) (func(ctx context.Context, local *sqlstore.Store, db *sql.DB, file OpenFile, cfg model.Config) (model.Store, error), error) {
	m, err := find(replicaMutants(), "replica mutant", name)
	return m.writer, err
}

// names lists a table's names, sorted.
func names[M any](table map[string]M) []string { return slices.Sorted(maps.Keys(table)) }

// find looks name up in table, or says which names of kind it knows.
func find[M any](table map[string]M, kind, name string) (M, error) {
	m, ok := table[name]
	if !ok {
		return m, fmt.Errorf("unknown %s %q (known: %v)", kind, name, names(table))
	}
	return m, nil
}

// The replica mutants read the replica before the commit starts: once a
// transaction's first statement has gone to the primary, an embedded
// replica with read-your-writes has synced, and its copy is fresh.

// casOnReplica checks the caller's version against the replica's copy,
// then writes the row without the version guard.
func casOnReplica(ctx context.Context, _ *sqlstore.Store, db *sql.DB, _ OpenFile, cfg model.Config) (model.Store, error) {
	st := sqlstore.SQLite()
	// BUG: no "AND version = ?": the row is overwritten at whatever version
	// the primary holds.
	st.UpdateExecution = "UPDATE executions SET data = ?, version = ? WHERE id = ? AND ? IS NOT NULL"
	blind, err := sqlstore.New(ctx, db, cfg, sqlstore.Options{
		Name: "libsql+replica (mutant " + ReplicaCASOnReplica + ")", Statements: &st, SkipSchema: true,
	})
	if err != nil {
		return nil, err
	}
	return &replicaChecked{Store: blind, db: db}, nil
}

// replicaChecked decides the compare-and-swap on the replica's copy.
type replicaChecked struct {
	*sqlstore.Store
	db *sql.DB
}

func (s *replicaChecked) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	// BUG: the version compared is the replica's, which may be stale.
	v, ok, err := localVersion(ctx, s.db, sqlstore.SQLite().SelectVersion, exe.ID)
	switch {
	case err != nil:
		return err
	case !ok && exe.Version != 0:
		return &model.StoreConflict{ID: exe.ID, Expected: exe.Version}
	case ok && v != exe.Version:
		return &model.StoreConflict{ID: exe.ID, Expected: exe.Version, Found: &v}
	}
	return s.Store.Commit(ctx, exe, b)
}

func (s *replicaChecked) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// localVersion reads an execution's version on a connection of its own,
// outside any transaction: an embedded replica serves it locally.
func localVersion(ctx context.Context, db *sql.DB, query, id string) (int64, bool, error) {
	var v int64
	err := db.QueryRowContext(ctx, query, id).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("read the version from the replica: %w", err)
	}
	return v, true, nil
}

// staleConflict is the real writer whose conflicts report the version the
// replica held when the commit was called instead of what the primary
// found.
func staleConflict(_ context.Context, local *sqlstore.Store, db *sql.DB, _ OpenFile, _ model.Config) (model.Store, error) {
	return &staleConflicts{Store: local, db: db}, nil
}

type staleConflicts struct {
	*sqlstore.Store
	db *sql.DB
}

func (s *staleConflicts) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	v, found, lerr := localVersion(ctx, s.db, sqlstore.SQLite().SelectVersion, exe.ID)
	err := s.Store.Commit(ctx, exe, b)
	c, ok := model.AsConflict(err)
	if !ok || lerr != nil {
		return err
	}
	// BUG: the replica's copy from before the commit, maybe older than
	// what the primary found.
	out := &model.StoreConflict{ID: c.ID, Expected: c.Expected}
	if found {
		out.Found = &v
	}
	return out
}

func (s *staleConflicts) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// writeLocal writes through a store on the replica's own file.
func writeLocal(ctx context.Context, _ *sqlstore.Store, _ *sql.DB, file OpenFile, _ model.Config) (model.Store, error) {
	// BUG: nothing is delegated; the commit, compare-and-swap included, is
	// decided and applied on the replica's copy.
	return file(ctx)
}
