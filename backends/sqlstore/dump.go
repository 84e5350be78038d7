package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/rowconv"
	"github.com/storecheck/storecheck/model"
)

// Dump implements model.Dumper: the six tables read in one read transaction,
// JSON columns canonicalised, rows sorted by primary key.
func (s *Store) Dump(ctx context.Context) (*model.Dump, error) {
	d := &model.Dump{}
	err := s.inTx(ctx, s.st.BeginRead, func(c *sql.Conn) error {
		var err error
		if d.Executions, err = collect(ctx, c, rowconv.ExecutionRow, rowconv.ExecutionCols, s.st.DumpExecutions); err != nil {
			return fmt.Errorf("executions: %w", err)
		}
		if d.Outbox, err = collect(ctx, c, rowconv.OutboxRow, rowconv.OutboxCols, s.st.DumpOutbox); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
		if d.Processed, err = collect(ctx, c, rowconv.ProcessedRow, rowconv.ProcessedCols, s.st.DumpProcessed); err != nil {
			return fmt.Errorf("processed_events: %w", err)
		}
		if d.Timers, err = collect(ctx, c, rowconv.TimerRow, rowconv.TimerCols, s.st.DumpTimers); err != nil {
			return fmt.Errorf("timers: %w", err)
		}
		if d.Spawns, err = collect(ctx, c, rowconv.SpawnRow, rowconv.SpawnCols, s.st.DumpSpawns); err != nil {
			return fmt.Errorf("spawns: %w", err)
		}
		if d.Trace, err = collect(ctx, c, rowconv.TraceRow, rowconv.TraceCols, s.st.DumpTrace); err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, s.errorf("dump: %w", err)
	}
	d.Sort()
	return d, nil
}

// Reset implements model.Resetter: every row of the six tables and the
// AUTOINCREMENT counters go, in one write transaction, so the store numbers
// its outbox and spawns from 1 again like a new one.
func (s *Store) Reset(ctx context.Context) error {
	err := s.inTx(ctx, s.st.BeginWrite, func(c *sql.Conn) error {
		for _, q := range s.st.Reset {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return s.errorf("reset: %w", err)
	}
	return nil
}
