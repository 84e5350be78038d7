package lagsim

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/stmtcache"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"

	_ "modernc.org/sqlite" // the "sqlite" driver the replicas' connections use
)

// A replica is one read-only connection to the primary's file that holds a
// read transaction open. The primary is in WAL mode, where a read
// transaction sees the database as it was when the transaction began,
// whatever commits after it: holding one open is a replica that lags, and
// a refresh ends it and begins another. Every read of the replica runs on
// that connection, inside that transaction, so a reader sees one snapshot
// of the primary, never a mix of two, and never anything newer than the
// last refresh.
//
// Nothing is copied: a refresh is three statements. This replaced a copy
// of the whole primary into an in-memory database per refresh
// (sqlite3_serialize and sqlite3_deserialize), which also made every
// statement of the replica be parsed again after each refresh
// (BenchmarkRefresh, docs/PERFORMANCE.md), and before that SQLite's online
// backup API into a replica file.
//
// The cost is on the primary's WAL: a checkpoint copies back only the
// frames no held snapshot still reads, and the WAL starts over only when no
// snapshot reads any, so with replicas lagging by turns it grows for as
// long as the cluster is open. The cluster bounds it (wal.go).

// replicaURI opens the primary read-only, waiting for locks like the
// store's own connections.
func replicaURI(primary string) string {
	return dbfile.FileURI(primary) + "?mode=ro&_pragma=busy_timeout(10000)"
}

// Statements of the snapshot a replica holds.
const (
	endSnapshot   = "ROLLBACK"
	beginSnapshot = "BEGIN"
	// takeSnapshot is the first read of the new transaction (a deferred
	// transaction takes its snapshot at its first read, not at BEGIN), and
	// it reads the replication position the snapshot holds (position.go).
	takeSnapshot = readPosition
	// A read that the store runs in a transaction of its own (a dump) runs
	// in a savepoint of the held one: a second BEGIN would be refused.
	readSavepoint = "SAVEPOINT replica_read"
	endSavepoint  = "RELEASE replica_read"
)

// snapshot is one replica connection and the replication position of the
// snapshot it holds, read from that snapshot itself when it was taken.
type snapshot struct {
	*sqlstore.Store
	pos atomic.Int64
}

// openReplica opens a replica of the primary at path, holding the primary's
// current snapshot. The primary must hold the position table (position.go).
func openReplica(ctx context.Context, path string, cfg model.Config, name string) (*snapshot, error) {
	db, err := stmtcache.OpenDB("sqlite", replicaURI(path))
	if err != nil {
		return nil, fmt.Errorf("open replica %s on the primary: %w", name, err)
	}
	db.SetMaxOpenConns(1) // the connection that holds the snapshot
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	st := sqlstore.SQLite()
	// Nothing is ever written through a replica; ending a savepoint of
	// reads is the same whether it succeeded or not.
	st.BeginRead, st.CommitTx, st.RollbackTx = readSavepoint, endSavepoint, endSavepoint
	store, err := sqlstore.New(ctx, db, cfg, sqlstore.Options{
		Name: Scheme + " replica " + name, Statements: &st, SkipSchema: true,
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open replica %s on the primary: %w", name, err)
	}
	s := &snapshot{Store: store}
	if err := s.refresh(ctx); err != nil {
		store.Close()
		return nil, fmt.Errorf("replica %s: %w", name, err)
	}
	return s, nil
}

// position is the replication position of the snapshot held.
func (s *snapshot) position() int64 { return s.pos.Load() }

// dump reads the six tables of the snapshot held (in a savepoint of its
// transaction: the snapshot stays).
func (s *snapshot) dump(ctx context.Context) (*model.Dump, error) { return s.Dump(ctx) }

// refresh moves the replica (its one connection) to the primary's current
// snapshot. Once it has the connection it does not stop for ctx: the three
// statements are local and bounded by the busy timeout, and stopping
// between them would leave the replica without a snapshot. If one fails
// anyway, the replica reads the primary's latest state until the next
// refresh succeeds: fresher than it should be, never older, and each read
// still one snapshot; its position stays the last one taken.
func (s *snapshot) refresh(ctx context.Context) error {
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		return fmt.Errorf("refresh: get the replica's connection: %w", err)
	}
	defer conn.Close()
	release(ctx, conn)
	return s.hold(ctx, conn)
}

// release ends the snapshot a replica's connection holds, if any.
func release(ctx context.Context, conn *sql.Conn) {
	// The first refresh of a connection has no snapshot to end.
	_, _ = conn.ExecContext(context.WithoutCancel(ctx), endSnapshot)
}

// hold makes a replica's connection, holding no snapshot, take the
// primary's current one, and keeps the position it holds.
func (s *snapshot) hold(ctx context.Context, conn *sql.Conn) error {
	ctx = context.WithoutCancel(ctx)
	if _, err := conn.ExecContext(ctx, beginSnapshot); err != nil {
		return fmt.Errorf("refresh: begin the replica's snapshot: %w", err)
	}
	var pos int64
	if err := conn.QueryRowContext(ctx, takeSnapshot).Scan(&pos); err != nil {
		return fmt.Errorf("refresh: take the primary's snapshot and its replication position: %w", err)
	}
	s.pos.Store(pos)
	return nil
}
