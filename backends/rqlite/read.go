package rqlite

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/rowconv"
	"github.com/storecheck/storecheck/model"
)

// LoadForEventSQL is the seed's (and its async twin's) single-request load
// and dedupe check: (id, event_id, id) -> data, 0/1.
const LoadForEventSQL = "SELECT data, EXISTS(SELECT 1 FROM processed_events WHERE execution_id = ? AND event_id = ?) " +
	"FROM executions WHERE id = ?"

// Load implements model.Store.
func (s *Store) Load(ctx context.Context, id string) (*model.Execution, error) {
	rows, err := s.query(ctx, s.level, s.st.Load, id)
	if err != nil {
		return nil, errorf("load %q: %w", id, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	data, err := rowconv.Text(rows[0][0])
	if err == nil {
		var exe *model.Execution
		if exe, err = rowconv.Execution(data); err == nil {
			return exe, nil
		}
	}
	return nil, errorf("load %q: %w", id, err)
}

// LoadForEvent implements model.Store with the seed's single query.
func (s *Store) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	rows, err := s.query(ctx, s.level, LoadForEventSQL, id, eventID, id)
	if err != nil {
		return nil, false, errorf("load %q for event %q: %w", id, eventID, err)
	}
	if len(rows) == 0 {
		return nil, false, nil
	}
	exe, done, err := func() (*model.Execution, bool, error) {
		if len(rows[0]) < 2 {
			return nil, false, fmt.Errorf("row has %d columns, want 2", len(rows[0]))
		}
		data, err := rowconv.Text(rows[0][0])
		if err != nil {
			return nil, false, err
		}
		done, err := rowconv.Truth(rows[0][1])
		if err != nil {
			return nil, false, err
		}
		exe, err := rowconv.Execution(data)
		return exe, done, err
	}()
	if err != nil {
		return nil, false, errorf("load %q for event %q: %w", id, eventID, err)
	}
	return exe, done, nil
}

// ListExecutions implements model.Store: json_extract projections and
// filters, ORDER BY id, limit+1 rows to learn whether a next page exists.
func (s *Store) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	if err := model.CheckLimit(f.Limit); err != nil {
		return model.Page{}, errorf("list executions: %w", err)
	}
	off, err := model.DecodeOffsetCursor(f.Cursor)
	if err != nil {
		return model.Page{}, errorf("list executions: %w", err)
	}
	q, args := s.st.ListQuery(f, off)
	rows, err := s.query(ctx, s.level, q, args...)
	if err != nil {
		return model.Page{}, errorf("list executions: %w", err)
	}
	items, err := convert(rows, rowconv.SummaryCols, rowconv.Summary)
	if err != nil {
		return model.Page{}, errorf("list executions: %w", err)
	}
	var page model.Page
	if len(items) > f.Limit {
		items = items[:f.Limit]
		page.Next = model.EncodeOffsetCursor(off + f.Limit)
	}
	if len(items) > 0 {
		page.Items = items
	}
	return page, nil
}

// IsProcessed implements model.Store.
func (s *Store) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	rows, err := s.query(ctx, s.level, s.st.IsProcessed, id, eventID)
	if err != nil {
		return false, errorf("is processed %q %q: %w", id, eventID, err)
	}
	return len(rows) > 0, nil
}

// PendingOutbox implements model.Store.
func (s *Store) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	rows, err := s.query(ctx, s.level, s.st.PendingOutbox)
	if err == nil {
		var out []model.OutboxEntry
		if out, err = convert(rows, rowconv.OutboxCols, rowconv.OutboxEntry); err == nil {
			return out, nil
		}
	}
	return nil, errorf("pending outbox: %w", err)
}

// PendingSpawns implements model.Store.
func (s *Store) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	rows, err := s.query(ctx, s.level, s.st.PendingSpawns)
	if err == nil {
		var out []model.SpawnEntry
		if out, err = convert(rows, rowconv.SpawnCols, rowconv.SpawnEntry); err == nil {
			return out, nil
		}
	}
	return nil, errorf("pending spawns: %w", err)
}

// DueTimers implements model.Store; the order is the statement's (ORDER BY
// fire_at), ties in whatever order SQLite gives.
func (s *Store) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	rows, err := s.query(ctx, s.level, s.st.DueTimers, now)
	if err == nil {
		var out []model.DueTimer
		if out, err = convert(rows, rowconv.TimerCols, rowconv.DueTimer); err == nil {
			if len(out) == 0 {
				return nil, nil
			}
			return out, nil
		}
	}
	return nil, errorf("due timers at %v: %w", now, err)
}

// ReadTrace implements model.Store.
func (s *Store) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	rows, err := s.query(ctx, s.level, s.st.ReadTrace, id)
	if err == nil {
		var out []model.TraceEntry
		if out, err = convert(rows, rowconv.TraceEntryCols, rowconv.TraceEntry); err == nil {
			return out, nil
		}
	}
	return nil, errorf("read trace %q: %w", id, err)
}
