package runsqlite

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/model/runstore"
)

// Dump implements runstore.Dumper: the five contract tables, read in one
// transaction so that they are consistent with each other.
func (s *Store) Dump(ctx context.Context) (*runstore.Dump, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: dump: %w", s.name, err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, fmt.Errorf("%s: dump: %w", s.name, err)
	}
	defer rollback(ctx, c)
	d := &runstore.Dump{}
	if d.Runs, err = queryAll(ctx, c, scanRun, `SELECT `+runColumns+` FROM runs`); err != nil {
		return nil, fmt.Errorf("%s: dump runs: %w", s.name, err)
	}
	if d.Events, err = queryAll(ctx, c, scanEvent, `SELECT `+eventColumns+` FROM run_events`); err != nil {
		return nil, fmt.Errorf("%s: dump run_events: %w", s.name, err)
	}
	if d.Checkpoints, err = queryAll(ctx, c, scanCheckpoint, `SELECT `+checkpointColumns+` FROM checkpoints`); err != nil {
		return nil, fmt.Errorf("%s: dump checkpoints: %w", s.name, err)
	}
	if d.Interrupts, err = queryAll(ctx, c, scanInterrupt, `SELECT `+interruptColumns+` FROM interrupts`); err != nil {
		return nil, fmt.Errorf("%s: dump interrupts: %w", s.name, err)
	}
	if d.Leases, err = queryAll(ctx, c, scanLease, `SELECT `+leaseColumns+` FROM run_leases`); err != nil {
		return nil, fmt.Errorf("%s: dump run_leases: %w", s.name, err)
	}
	d.Sort()
	return d, nil
}
