package mutants

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// SnapshotEvery is how often periodic-snapshot saves its working copy to
// the file it was opened on.
const SnapshotEvery = 100 * time.Millisecond

// snapshotTables are saved whole at every snapshot: the six tables and the
// AUTOINCREMENT high-water marks, so that a restored store never reissues
// a seq.
func snapshotTables() []string { return append(replicaTables(), "sqlite_sequence") }

// periodicSnapshot serves every call from a working copy of its file and
// saves the copy to the file every SnapshotEvery and on Close, as a store
// that keeps its data in memory and persists snapshots does. On open it
// starts from the file: whatever the last snapshot missed is gone.
type periodicSnapshot struct {
	*base
	file *sqlstore.Store // the store on the URL's file, which holds the snapshots
	work string          // the working copy's path

	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex // serialises snapshots
	err error      // the first snapshot that failed; guarded by mu
}

func wrapPeriodicSnapshot(ctx context.Context, b *base, cfg model.Config) (model.Store, error) {
	if b.path == dbfile.Memory {
		return nil, errors.New("snapshots are saved to a file, and :memory: has none")
	}
	work := b.path + ".live"
	// A working copy left by a process that was killed is not read: the
	// store starts again from its last snapshot.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(work + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove the old working copy: %w", err)
		}
	}
	st := b.st
	live, err := sqlite.Open(ctx, work, cfg, sqlite.WithStoreOptions(sqlstore.Options{Name: b.name + " working copy", Statements: &st}))
	if err != nil {
		return nil, fmt.Errorf("working copy: %w", err)
	}
	if err := copyFile(ctx, live.DB(), b.path, snapshotTables()); err != nil {
		return nil, errors.Join(fmt.Errorf("restore the last snapshot: %w", err), live.Close())
	}
	s := &periodicSnapshot{base: b, file: b.Store, work: work, stop: make(chan struct{}), done: make(chan struct{})}
	// Every call now goes to the working copy: Close closes it first, then
	// runs the closers below in order.
	b.Store = live
	b.closers = append([]func() error{s.stopSaving, s.file.Close, s.removeWork}, b.closers...)
	go s.saveEvery(context.WithoutCancel(ctx))
	return s, nil
}

// saveEvery saves a snapshot every SnapshotEvery until stopSaving.
func (s *periodicSnapshot) saveEvery(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(SnapshotEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.save(ctx)
		}
	}
}

// save copies the working copy into the file, in one transaction of the
// file.
func (s *periodicSnapshot) save(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// BUG: a commit is acknowledged once it is in the working copy; it is
	// durable only after the next snapshot, up to SnapshotEvery later, so a
	// process that dies in between loses commits it acknowledged.
	if err := copyFile(ctx, s.file.DB(), s.work, snapshotTables()); err != nil && s.err == nil {
		s.err = s.errorf("snapshot: %w", err)
	}
}

// stopSaving stops the snapshots and saves the last one: a clean close
// loses nothing.
func (s *periodicSnapshot) stopSaving() error {
	close(s.stop)
	<-s.done
	s.save(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// removeWork removes the working copy once the file holds its last state.
func (s *periodicSnapshot) removeWork() error {
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(s.work + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, s.errorf("remove the working copy: %w", err))
		}
	}
	return errors.Join(errs...)
}
