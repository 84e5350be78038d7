package lagsim

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/dbfile"

	sqlite "modernc.org/sqlite"
)

// restorer is what modernc's connections offer for the online backup API:
// copy another database, whole, into this connection's main database.
type restorer interface {
	NewRestore(srcURI string) (*sqlite.Backup, error)
}

// sourceURI opens the primary read-only for a refresh, waiting for locks
// like the store's own connections.
func sourceURI(primary string) string {
	return dbfile.FileURI(primary) + "?mode=ro&_pragma=busy_timeout(10000)"
}

// refresh copies the primary at path into the replica db with the backup
// API, all pages in one step: one read transaction on the primary (one
// snapshot) and one write transaction on the replica, so the replica's
// readers see the previous snapshot or this one, never a mix. On failure
// the replica is unchanged.
func refresh(ctx context.Context, replica *sql.DB, primary string) error {
	conn, err := replica.Conn(ctx)
	if err != nil {
		return fmt.Errorf("refresh: replica connection: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		if u, ok := dc.(interface{ Unwrap() driver.Conn }); ok {
			dc = u.Unwrap() // the statement cache's wrapper
		}
		r, ok := dc.(restorer)
		if !ok {
			return fmt.Errorf("the replica's driver connection (%T) has no backup API", dc)
		}
		b, err := r.NewRestore(sourceURI(primary))
		if err != nil {
			return fmt.Errorf("start backup: %w", err)
		}
		more, err := b.Step(-1)
		if ferr := b.Finish(); err == nil && ferr != nil {
			err = fmt.Errorf("finish backup: %w", ferr)
		}
		if err == nil && more {
			err = fmt.Errorf("backup stopped with pages left")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("refresh from %s: %w", primary, err)
	}
	return nil
}
