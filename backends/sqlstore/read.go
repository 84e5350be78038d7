package sqlstore

import (
	"context"

	"github.com/storecheck/storecheck/backends/internal/rowconv"
	"github.com/storecheck/storecheck/model"
)

// Load implements model.Store.
func (s *Store) Load(ctx context.Context, id string) (*model.Execution, error) {
	datas, err := collect(ctx, s.db, func(c []any) (string, error) { return rowconv.Text(c[0]) }, 1, s.st.Load, id)
	if err != nil {
		return nil, s.errorf("load %q: %w", id, err)
	}
	if len(datas) == 0 {
		return nil, nil
	}
	exe, err := rowconv.Execution(datas[0])
	if err != nil {
		return nil, s.errorf("load %q: %w", id, err)
	}
	return exe, nil
}

// LoadForEvent implements model.Store with the seed's single query.
func (s *Store) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	type row struct {
		data *string
		done bool
	}
	rows, err := collect(ctx, s.db, func(c []any) (row, error) {
		data, err := rowconv.NullText(c[0])
		if err != nil {
			return row{}, err
		}
		done, err := rowconv.Truth(c[1])
		return row{data, done}, err
	}, 2, s.st.LoadForEvent, id, id, eventID)
	if err != nil {
		return nil, false, s.errorf("load %q for event %q: %w", id, eventID, err)
	}
	if len(rows) == 0 || rows[0].data == nil {
		return nil, false, nil
	}
	exe, err := rowconv.Execution(*rows[0].data)
	if err != nil {
		return nil, false, s.errorf("load %q for event %q: %w", id, eventID, err)
	}
	return exe, rows[0].done, nil
}

// ListExecutions implements model.Store: json_extract projections and
// filters, ORDER BY id, limit+1 rows to learn whether a next page exists.
func (s *Store) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	if err := model.CheckLimit(f.Limit); err != nil {
		return model.Page{}, s.errorf("list executions: %w", err)
	}
	off, err := model.DecodeOffsetCursor(f.Cursor)
	if err != nil {
		return model.Page{}, s.errorf("list executions: %w", err)
	}
	query, args := s.st.ListQuery(f, off)
	items, err := collect(ctx, s.db, rowconv.Summary, rowconv.SummaryCols, query, args...)
	if err != nil {
		return model.Page{}, s.errorf("list executions: %w", err)
	}
	var page model.Page
	if len(items) > f.Limit {
		items = items[:f.Limit]
		page.Next = model.EncodeOffsetCursor(off + f.Limit)
	}
	page.Items = items
	return page, nil
}

// IsProcessed implements model.Store.
func (s *Store) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	rows, err := collect(ctx, s.db, func([]any) (bool, error) { return true, nil }, 1, s.st.IsProcessed, id, eventID)
	if err != nil {
		return false, s.errorf("is processed %q %q: %w", id, eventID, err)
	}
	return len(rows) > 0, nil
}

// PendingOutbox implements model.Store.
func (s *Store) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	out, err := collect(ctx, s.db, rowconv.OutboxEntry, rowconv.OutboxCols, s.st.PendingOutbox)
	if err != nil {
		return nil, s.errorf("pending outbox: %w", err)
	}
	return nonNil(out), nil
}

// AckOutbox implements model.Store.
func (s *Store) AckOutbox(ctx context.Context, seq int64) error {
	if _, err := s.db.ExecContext(ctx, s.st.AckOutbox, seq); err != nil {
		return s.errorf("ack outbox %d: %w", seq, err)
	}
	return nil
}

// PendingSpawns implements model.Store.
func (s *Store) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	out, err := collect(ctx, s.db, rowconv.SpawnEntry, rowconv.SpawnCols, s.st.PendingSpawns)
	if err != nil {
		return nil, s.errorf("pending spawns: %w", err)
	}
	return nonNil(out), nil
}

// AckSpawn implements model.Store.
func (s *Store) AckSpawn(ctx context.Context, seq int64) error {
	if _, err := s.db.ExecContext(ctx, s.st.AckSpawn, seq); err != nil {
		return s.errorf("ack spawn %d: %w", seq, err)
	}
	return nil
}

// DueTimers implements model.Store; the order is the statement's
// (ORDER BY fire_at), ties in whatever order SQLite gives.
func (s *Store) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	out, err := collect(ctx, s.db, rowconv.DueTimer, rowconv.TimerCols, s.st.DueTimers, now)
	if err != nil {
		return nil, s.errorf("due timers at %v: %w", now, err)
	}
	return out, nil
}

// DeleteTimer implements model.Store.
func (s *Store) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	if _, err := s.db.ExecContext(ctx, s.st.DeleteTimer, id, path, fireAt); err != nil {
		return s.errorf("delete timer %q %q: %w", id, path, err)
	}
	return nil
}

// ReadTrace implements model.Store.
func (s *Store) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	out, err := collect(ctx, s.db, rowconv.TraceEntry, rowconv.TraceEntryCols, s.st.ReadTrace, id)
	if err != nil {
		return nil, s.errorf("read trace %q: %w", id, err)
	}
	return nonNil(out), nil
}

// nonNil returns an empty slice for nil, as model.Reference does for the
// queues and the trace.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
