// Package sqlstore is the execution store of harel's SqliteStore and
// LibsqlStore (seed 000) over database/sql: the same six tables, the same
// version compare-and-swap, the same one-transaction commit and trace ring.
//
// Every SQL text the store runs is a field of Statements, and SQLite returns
// the seed's statements. A Store runs whatever Statements it is given, so a
// later package derives a deliberately broken variant (a "mutant") by copying
// SQLite() and swapping one statement, and a dialect that needs other SQL (an
// rqlite client, say) starts from the same texts. Options.Hooks adds one seam
// for fault injection between the last write of a commit and its COMMIT.
//
// The store is driver-agnostic; the sqlite and libsql packages open the
// database, configure its connections and hand the *sql.DB to New. Several
// goroutines may use one Store at once: reads share the pool, and every write
// transaction starts with BEGIN IMMEDIATE, so concurrent writers queue on the
// connection's busy timeout instead of failing on a lock upgrade, and a lost
// compare-and-swap comes out as a *model.StoreConflict.
//
// A failed write whose transaction provably never committed (it failed
// before COMMIT, or COMMIT failed and the ROLLBACK after it succeeded) is
// wrapped with model.ErrNotApplied; any other failed write has an unknown
// outcome. exe.Version advances only after COMMIT succeeded.
//
// Text columns are selected as CAST(… AS BLOB): the libSQL driver turns any
// TEXT value that parses as a timestamp into a time.Time, and a blob comes
// back as the exact bytes. The scanning helpers refuse a time.Time rather
// than guess its original spelling.
package sqlstore
