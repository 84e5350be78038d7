package mutants

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/internal/tmpfs"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// ReplicaLag is how old stale-read's copy may get before a read refreshes it.
const ReplicaLag = 300 * time.Millisecond

// replicaTables are copied, whole, at every refresh.
func replicaTables() []string {
	return []string{"executions", "outbox", "processed_events", "timers", "spawns", "trace"}
}

// staleRead is a lagging follower in miniature: writes go to the primary
// file, and load and load_for_event read a second SQLite file that is
// refreshed from the primary — all six tables copied in one transaction —
// when a read finds it older than ReplicaLag.
type staleRead struct {
	*base
	replica *sqlstore.Store

	mu        sync.Mutex // serialises refreshes
	refreshed time.Time  // guarded by mu
}

func wrapStaleRead(ctx context.Context, b *base, cfg model.Config) (model.Store, error) {
	if b.path == dbfile.Memory {
		return nil, errors.New("the copy is refreshed from the primary's file, and :memory: has none")
	}
	dir := b.dir
	if dir == "" { // the primary file was given: the copy goes in a folder of its own
		d, err := tmpfs.MkdirTemp("", "storecheck-replica-")
		if err != nil {
			return nil, fmt.Errorf("replica folder: %w", err)
		}
		dir = d
		b.closers = append(b.closers, func() error { return os.RemoveAll(d) })
	}
	replica, err := sqlite.Open(ctx, filepath.Join(dir, "replica.db"), cfg,
		sqlite.WithStoreOptions(sqlstore.Options{Name: b.name + " replica"}))
	if err != nil {
		return nil, err
	}
	// Closed before the folder is removed; prepended so that it also runs
	// before the removal of a replica folder of its own.
	b.closers = append([]func() error{replica.Close}, b.closers...)
	s := &staleRead{base: b, replica: replica}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Load implements model.Store from the copy.
func (s *staleRead) Load(ctx context.Context, id string) (*model.Execution, error) {
	if err := s.catchUp(ctx); err != nil {
		return nil, s.errorf("load %q: %w", id, err)
	}
	// BUG: a read served by a copy that may be ReplicaLag behind the
	// primary: an acknowledged commit can be missing from it.
	return s.replica.Load(ctx, id)
}

// LoadForEvent implements model.Store from the copy.
func (s *staleRead) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	if err := s.catchUp(ctx); err != nil {
		return nil, false, s.errorf("load %q for event %q: %w", id, eventID, err)
	}
	// BUG: as in Load.
	return s.replica.LoadForEvent(ctx, id, eventID)
}

// Reset implements model.Resetter: both files are emptied, so a reset store
// starts with nothing to be stale about.
func (s *staleRead) Reset(ctx context.Context) error {
	if err := s.base.Reset(ctx); err != nil {
		return err
	}
	return s.refresh(ctx)
}

// catchUp refreshes the copy when it is older than ReplicaLag.
func (s *staleRead) catchUp(ctx context.Context) error {
	s.mu.Lock()
	due := time.Since(s.refreshed) >= ReplicaLag
	s.mu.Unlock()
	if !due {
		return nil
	}
	return s.refresh(ctx)
}

// refresh copies the primary's tables into the copy, in one transaction of
// the copy, reading one snapshot of the primary.
func (s *staleRead) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := copyFile(ctx, s.replica.DB(), s.path, replicaTables()); err != nil {
		return fmt.Errorf("refresh copy: %w", err)
	}
	s.refreshed = time.Now()
	return nil
}

// copyFile replaces the tables of dst with those of the database file src,
// attached to one connection of dst for the copy.
func copyFile(ctx context.Context, dst *sql.DB, src string, tables []string) error {
	conn, err := dst.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS src", src); err != nil {
		return fmt.Errorf("attach %s: %w", src, err)
	}
	err = copyTables(ctx, conn, tables)
	if _, derr := conn.ExecContext(context.WithoutCancel(ctx), "DETACH DATABASE src"); derr != nil {
		// A connection left attached must not go back to the pool.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		err = errors.Join(err, fmt.Errorf("detach %s: %w", src, derr))
	}
	return err
}

// copyTables replaces every table of main with src's, in one transaction.
// It is deferred, so that src is only read.
func copyTables(ctx context.Context, conn *sql.Conn, tables []string) error {
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	for _, t := range tables {
		for _, q := range []string{"DELETE FROM main." + t, "INSERT INTO main." + t + " SELECT * FROM src." + t} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				rollback(ctx, conn)
				return fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		rollback(ctx, conn)
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
