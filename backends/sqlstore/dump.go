package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// Dump implements model.Dumper: the six tables read in one read transaction,
// JSON columns canonicalised, rows sorted by primary key.
func (s *Store) Dump(ctx context.Context) (*model.Dump, error) {
	d := &model.Dump{}
	err := s.inTx(ctx, s.st.BeginRead, func(c *sql.Conn) error {
		var err error
		if d.Executions, err = collect(ctx, c, executionRow, 4, s.st.DumpExecutions); err != nil {
			return fmt.Errorf("executions: %w", err)
		}
		if d.Outbox, err = collect(ctx, c, outboxRow, 3, s.st.DumpOutbox); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
		if d.Processed, err = collect(ctx, c, processedRow, 2, s.st.DumpProcessed); err != nil {
			return fmt.Errorf("processed_events: %w", err)
		}
		if d.Timers, err = collect(ctx, c, timerRow, 3, s.st.DumpTimers); err != nil {
			return fmt.Errorf("timers: %w", err)
		}
		if d.Spawns, err = collect(ctx, c, spawnRow, 5, s.st.DumpSpawns); err != nil {
			return fmt.Errorf("spawns: %w", err)
		}
		if d.Trace, err = collect(ctx, c, traceRow, 3, s.st.DumpTrace); err != nil {
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

// canonical reads a JSON text column and canonicalises it.
func canonical(v any) (string, error) {
	s, err := text(v)
	if err != nil {
		return "", err
	}
	return model.CanonicalJSON([]byte(s))
}

func executionRow(c []any) (model.ExecutionRow, error) {
	var (
		r   model.ExecutionRow
		err error
	)
	if r.ID, err = text(c[0]); err != nil {
		return r, fmt.Errorf("id: %w", err)
	}
	if r.DefinitionID, err = text(c[1]); err != nil {
		return r, fmt.Errorf("definition_id: %w", err)
	}
	data, err := text(c[2])
	if err != nil {
		return r, fmt.Errorf("data: %w", err)
	}
	if r.Data, err = model.CanonicalJSON([]byte(data)); err != nil {
		return r, fmt.Errorf("data of %q: %w", r.ID, err)
	}
	if r.Version, err = integer(c[3]); err != nil {
		return r, fmt.Errorf("version: %w", err)
	}
	return r, nil
}

func outboxRow(c []any) (model.OutboxRow, error) {
	var (
		r   model.OutboxRow
		err error
	)
	if r.Seq, err = integer(c[0]); err != nil {
		return r, fmt.Errorf("seq: %w", err)
	}
	if r.TargetID, err = nullText(c[1]); err != nil {
		return r, fmt.Errorf("target_id: %w", err)
	}
	if r.Event, err = canonical(c[2]); err != nil {
		return r, fmt.Errorf("event: %w", err)
	}
	return r, nil
}

func processedRow(c []any) (model.ProcessedRow, error) {
	var (
		r   model.ProcessedRow
		err error
	)
	if r.ExecutionID, err = text(c[0]); err != nil {
		return r, fmt.Errorf("execution_id: %w", err)
	}
	if r.EventID, err = text(c[1]); err != nil {
		return r, fmt.Errorf("event_id: %w", err)
	}
	return r, nil
}

func timerRow(c []any) (model.TimerRow, error) {
	var (
		r   model.TimerRow
		err error
	)
	if r.ExecutionID, err = text(c[0]); err != nil {
		return r, fmt.Errorf("execution_id: %w", err)
	}
	if r.Path, err = text(c[1]); err != nil {
		return r, fmt.Errorf("path: %w", err)
	}
	if r.FireAt, err = float(c[2]); err != nil {
		return r, fmt.Errorf("fire_at: %w", err)
	}
	return r, nil
}

func spawnRow(c []any) (model.SpawnRow, error) {
	var (
		r   model.SpawnRow
		err error
	)
	if r.Seq, err = integer(c[0]); err != nil {
		return r, fmt.Errorf("seq: %w", err)
	}
	if r.ParentID, err = text(c[1]); err != nil {
		return r, fmt.Errorf("parent_id: %w", err)
	}
	if r.ChildID, err = text(c[2]); err != nil {
		return r, fmt.Errorf("child_id: %w", err)
	}
	if r.RootPath, err = text(c[3]); err != nil {
		return r, fmt.Errorf("root_path: %w", err)
	}
	if r.Context, err = canonical(c[4]); err != nil {
		return r, fmt.Errorf("context: %w", err)
	}
	return r, nil
}

func traceRow(c []any) (model.TraceRow, error) {
	var (
		r   model.TraceRow
		err error
	)
	if r.ExecutionID, err = text(c[0]); err != nil {
		return r, fmt.Errorf("execution_id: %w", err)
	}
	if r.Idx, err = integer(c[1]); err != nil {
		return r, fmt.Errorf("idx: %w", err)
	}
	if r.Entry, err = canonical(c[2]); err != nil {
		return r, fmt.Errorf("entry: %w", err)
	}
	return r, nil
}
