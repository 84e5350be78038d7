package lagsim

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/dbfile"

	_ "modernc.org/sqlite" // the "sqlite" driver the source connections use
)

// A refresh copies the primary, whole, into a replica held in memory: the
// primary's pages are read in one read transaction (sqlite3_serialize) and
// become the replica connection's database (sqlite3_deserialize). The
// primary is never written by a refresh, and a replica never sees a mix of
// two snapshots: it has one connection, which a read and a refresh take in
// turn, so its reads see the previous copy or this one.
//
// This replaced SQLite's online backup API into a replica file, which opened
// the primary afresh and wrote every page into the replica's WAL on each
// refresh: three times the cost (BenchmarkRefresh, docs/PERFORMANCE.md).

// sourceURI opens the primary read-only for the refreshes' reads, waiting
// for locks like the store's own connections.
func sourceURI(primary string) string {
	return dbfile.FileURI(primary) + "?mode=ro&_pragma=busy_timeout(10000)"
}

// sourceConns bounds the connections the refreshes read the primary on; a
// refresh holds one for the copy of the pages only.
const sourceConns = 4

// openSource opens the connections the refreshes read the primary with.
// They stay open: a new connection per refresh cost a quarter of it.
func openSource(primary string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", sourceURI(primary))
	if err != nil {
		return nil, fmt.Errorf("open the primary for the refreshes: %w", err)
	}
	db.SetMaxOpenConns(sourceConns)
	db.SetMaxIdleConns(sourceConns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// refresh copies the primary (read through source) into the replica, an
// in-memory database on a single connection. On failure the replica is
// unchanged.
func refresh(ctx context.Context, replica, source *sql.DB) error {
	pages, err := snapshot(ctx, source)
	if err != nil {
		return fmt.Errorf("refresh: read the primary: %w", err)
	}
	if err := install(ctx, replica, pages); err != nil {
		return fmt.Errorf("refresh: replace the replica: %w", err)
	}
	return nil
}

// snapshot returns the primary's pages, read in one read transaction, as
// a database in rollback-journal format that an in-memory connection can
// open.
func snapshot(ctx context.Context, source *sql.DB) ([]byte, error) {
	var pages []byte
	err := withDriverConn(ctx, source, func(dc any) error {
		s, ok := dc.(interface{ Serialize() ([]byte, error) })
		if !ok {
			return fmt.Errorf("the driver connection (%T) cannot serialize a database", dc)
		}
		var err error
		pages, err = s.Serialize()
		return err
	})
	if err != nil {
		return nil, err
	}
	return pages, rollbackFormat(pages)
}

// sqliteMagic opens every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// rollbackFormat turns a copy of a WAL-mode database into the same database
// in rollback-journal format, in place: bytes 18 and 19 of the header (the
// file format's write and read versions) are 2 for WAL and 1 for the
// rollback journal, and nothing else in the file depends on the mode
// (PRAGMA journal_mode=DELETE changes only them). An in-memory database
// cannot open a file in WAL format.
func rollbackFormat(pages []byte) error {
	if len(pages) < 100 || !bytes.Equal(pages[:len(sqliteMagic)], sqliteMagic) {
		return fmt.Errorf("the copy of the primary (%d bytes) is not an SQLite database", len(pages))
	}
	for _, b := range pages[18:20] {
		if b != 1 && b != 2 {
			return fmt.Errorf("the copy of the primary has file format version %d (1 or 2 expected)", b)
		}
	}
	pages[18], pages[19] = 1, 1
	return nil
}

// install makes pages the replica connection's database.
func install(ctx context.Context, replica *sql.DB, pages []byte) error {
	return withDriverConn(ctx, replica, func(dc any) error {
		d, ok := dc.(interface{ Deserialize([]byte) error })
		if !ok {
			return fmt.Errorf("the replica's driver connection (%T) cannot load a database", dc)
		}
		return d.Deserialize(pages)
	})
}

// withDriverConn runs f on one of db's driver connections, unwrapped from
// the statement cache.
func withDriverConn(ctx context.Context, db *sql.DB, f func(dc any) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if u, ok := dc.(interface{ Unwrap() driver.Conn }); ok {
			dc = u.Unwrap()
		}
		return f(dc)
	})
}
