package libsql

import (
	"context"
	"database/sql"

	"github.com/storecheck/storecheck/model"
)

// Reader builds the stores a client reads and writes through from the
// real ones: replica, its store on the embedded replica, whose plain reads
// are go-libsql's, served from the replica's own (maybe stale) file; writes,
// the store its writes go through (the real one, or a broken Writer's);
// primary, the cluster's own connection to the primary (its Close is the
// cluster's); file, which opens the replica's own file read-only on a
// local connection of go-libsql's driver, a database of one connection
// (the cluster closes it). It returns a deliberately broken reader (package mutants has
// them), which answers the client's reads by distorting what replica
// answers, and the writer, which it may wrap to learn of the client's
// writes but must send on unchanged. The reader owns replica: its Close
// closes it. The real backend reads through replica.
type Reader func(ctx context.Context, replica, writes, primary model.Store, file func(context.Context) (*sql.DB, error), cfg model.Config) (reader, writer model.Store, err error)

// ReaderLookup finds the reader a URL's read_mutant= names (package
// mutants has them); nil means the URL may name none.
type ReaderLookup func(name string) (Reader, error)
