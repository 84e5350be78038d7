package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/storecheck/storecheck/model"
)

// Load implements model.Store.
func (s *Store) Load(ctx context.Context, id string) (*model.Execution, error) {
	datas, err := collect(ctx, s.db, func(c []any) (string, error) { return text(c[0]) }, 1, s.st.Load, id)
	if err != nil {
		return nil, s.errorf("load %q: %w", id, err)
	}
	if len(datas) == 0 {
		return nil, nil
	}
	exe, err := decode(datas[0])
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
		data, err := nullText(c[0])
		if err != nil {
			return row{}, err
		}
		done, err := truth(c[1])
		return row{data, done}, err
	}, 2, s.st.LoadForEvent, id, id, eventID)
	if err != nil {
		return nil, false, s.errorf("load %q for event %q: %w", id, eventID, err)
	}
	if len(rows) == 0 || rows[0].data == nil {
		return nil, false, nil
	}
	exe, err := decode(*rows[0].data)
	if err != nil {
		return nil, false, s.errorf("load %q for event %q: %w", id, eventID, err)
	}
	return exe, rows[0].done, nil
}

func decode(data string) (*model.Execution, error) {
	var e model.Execution
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return nil, fmt.Errorf("stored execution is not valid: %w", err)
	}
	return &e, nil
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
	query, args := s.listQuery(f, off)
	items, err := collect(ctx, s.db, summary, 7, query, args...)
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

// listQuery joins the List fragments of the statements for f.
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
	rows, err := collect(ctx, s.db, func([]any) (bool, error) { return true, nil }, 1, s.st.IsProcessed, id, eventID)
	if err != nil {
		return false, s.errorf("is processed %q %q: %w", id, eventID, err)
	}
	return len(rows) > 0, nil
}

// PendingOutbox implements model.Store.
func (s *Store) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	out, err := collect(ctx, s.db, func(c []any) (model.OutboxEntry, error) {
		var (
			e   model.OutboxEntry
			err error
		)
		if e.Seq, err = integer(c[0]); err != nil {
			return e, fmt.Errorf("seq: %w", err)
		}
		if e.TargetID, err = nullText(c[1]); err != nil {
			return e, fmt.Errorf("target_id: %w", err)
		}
		ev, err := text(c[2])
		if err != nil {
			return e, fmt.Errorf("event: %w", err)
		}
		e.Event, err = model.ParseEvent(ev)
		return e, err
	}, 3, s.st.PendingOutbox)
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
	out, err := collect(ctx, s.db, func(c []any) (model.SpawnEntry, error) {
		r, err := spawnRow(c)
		return model.SpawnEntry{Seq: r.Seq, ParentID: r.ParentID, ChildID: r.ChildID, RootPath: r.RootPath, Context: json.RawMessage(r.Context)}, err
	}, 5, s.st.PendingSpawns)
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
	out, err := collect(ctx, s.db, func(c []any) (model.DueTimer, error) {
		r, err := timerRow(c)
		return model.DueTimer{ExecutionID: r.ExecutionID, Path: r.Path, FireAt: r.FireAt}, err
	}, 3, s.st.DueTimers, now)
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
	out, err := collect(ctx, s.db, func(c []any) (model.TraceEntry, error) {
		idx, err := integer(c[0])
		if err != nil {
			return model.TraceEntry{}, fmt.Errorf("idx: %w", err)
		}
		entry, err := text(c[1])
		if err != nil {
			return model.TraceEntry{}, fmt.Errorf("entry: %w", err)
		}
		return model.TraceEntry{Index: idx, Entry: json.RawMessage(entry)}, nil
	}, 2, s.st.ReadTrace, id)
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
