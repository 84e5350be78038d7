package rqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
	data, err := text(rows[0][0])
	if err == nil {
		var exe *model.Execution
		if exe, err = decode(data); err == nil {
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
		data, err := text(rows[0][0])
		if err != nil {
			return nil, false, err
		}
		done, err := truth(rows[0][1])
		if err != nil {
			return nil, false, err
		}
		exe, err := decode(data)
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
	q, args := s.listQuery(f, off)
	rows, err := s.query(ctx, s.level, q, args...)
	if err != nil {
		return model.Page{}, errorf("list executions: %w", err)
	}
	items, err := convert(rows, 7, summary)
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

// listQuery joins the statements' List fragments for f.
func (s *Store) listQuery(f model.ListFilter, off int) (string, []any) {
	var where []string
	var args []any
	if f.DefinitionID != nil {
		where = append(where, s.st.ListByDefinition)
		args = append(args, *f.DefinitionID)
	}
	if len(f.Statuses) > 0 {
		where = append(where, s.st.ListByStatusIn+"("+strings.TrimSuffix(strings.Repeat("?, ", len(f.Statuses)), ", ")+")")
		for _, st := range f.Statuses {
			args = append(args, st)
		}
	}
	if f.RootsOnly {
		where = append(where, s.st.ListRootsOnly)
	}
	q := s.st.ListSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " " + s.st.ListPage, append(args, int64(f.Limit)+1, int64(off))
}

func summary(c []any) (model.ExecutionSummary, error) {
	var (
		s   model.ExecutionSummary
		err error
	)
	if s.ID, err = text(c[0]); err != nil {
		return s, fmt.Errorf("id: %w", err)
	}
	if s.DefinitionID, err = text(c[1]); err != nil {
		return s, fmt.Errorf("definition_id: %w", err)
	}
	if s.Version, err = integer(c[2]); err != nil {
		return s, fmt.Errorf("version: %w", err)
	}
	if s.Status, err = text(c[3]); err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	if s.Outcome, err = nullText(c[4]); err != nil {
		return s, fmt.Errorf("outcome: %w", err)
	}
	if s.ActivePath, err = text(c[5]); err != nil {
		return s, fmt.Errorf("active_path: %w", err)
	}
	if s.ParentID, err = nullText(c[6]); err != nil {
		return s, fmt.Errorf("parent_id: %w", err)
	}
	return s, nil
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
		if out, err = convert(rows, 3, outboxEntry); err == nil {
			return out, nil
		}
	}
	return nil, errorf("pending outbox: %w", err)
}

func outboxEntry(c []any) (model.OutboxEntry, error) {
	r, err := outboxRow(c)
	if err != nil {
		return model.OutboxEntry{}, err
	}
	ev, err := model.ParseEvent(r.Event)
	return model.OutboxEntry{Seq: r.Seq, TargetID: r.TargetID, Event: ev}, err
}

// PendingSpawns implements model.Store.
func (s *Store) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	rows, err := s.query(ctx, s.level, s.st.PendingSpawns)
	if err == nil {
		var out []model.SpawnEntry
		if out, err = convert(rows, 5, func(c []any) (model.SpawnEntry, error) {
			r, err := spawnRow(c)
			return model.SpawnEntry{Seq: r.Seq, ParentID: r.ParentID, ChildID: r.ChildID, RootPath: r.RootPath, Context: json.RawMessage(r.Context)}, err
		}); err == nil {
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
		if out, err = convert(rows, 3, func(c []any) (model.DueTimer, error) {
			r, err := timerRow(c)
			return model.DueTimer{ExecutionID: r.ExecutionID, Path: r.Path, FireAt: r.FireAt}, err
		}); err == nil {
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
		if out, err = convert(rows, 2, func(c []any) (model.TraceEntry, error) {
			idx, err := integer(c[0])
			if err != nil {
				return model.TraceEntry{}, fmt.Errorf("idx: %w", err)
			}
			entry, err := text(c[1])
			if err != nil {
				return model.TraceEntry{}, fmt.Errorf("entry: %w", err)
			}
			return model.TraceEntry{Index: idx, Entry: json.RawMessage(entry)}, nil
		}); err == nil {
			return out, nil
		}
	}
	return nil, errorf("read trace %q: %w", id, err)
}
