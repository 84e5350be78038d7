package rqlite

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/model"
)

// Dump implements model.Dumper: the six tables read in one query request
// (rqlite runs it in one read transaction) at the store's level, JSON
// columns canonicalised, rows sorted by primary key. With level none it
// shows what the node asked holds, which is how convergence is compared.
func (s *Store) Dump(ctx context.Context) (*model.Dump, error) {
	queries := []string{s.st.DumpExecutions, s.st.DumpOutbox, s.st.DumpProcessed, s.st.DumpTimers, s.st.DumpSpawns, s.st.DumpTrace}
	stmts := make([]Statement, len(queries))
	for i, q := range queries {
		stmts[i] = Statement{SQL: q}
	}
	res, err := s.exec.Query(ctx, s.level, stmts)
	if err != nil {
		return nil, errorf("dump: %w", err)
	}
	if len(res) != len(stmts) {
		return nil, errorf("dump: rqlite answered %d results for %d queries", len(res), len(stmts))
	}
	for i, r := range res {
		if r.Err != nil {
			return nil, errorf("dump: query %d: %w", i, r.Err)
		}
	}
	d := &model.Dump{}
	if d.Executions, err = convert(res[0].Rows, 4, executionRow); err != nil {
		return nil, errorf("dump: executions: %w", err)
	}
	if d.Outbox, err = convert(res[1].Rows, 3, outboxRow); err != nil {
		return nil, errorf("dump: outbox: %w", err)
	}
	if d.Processed, err = convert(res[2].Rows, 2, processedRow); err != nil {
		return nil, errorf("dump: processed_events: %w", err)
	}
	if d.Timers, err = convert(res[3].Rows, 3, timerRow); err != nil {
		return nil, errorf("dump: timers: %w", err)
	}
	if d.Spawns, err = convert(res[4].Rows, 5, spawnRow); err != nil {
		return nil, errorf("dump: spawns: %w", err)
	}
	if d.Trace, err = convert(res[5].Rows, 3, traceRow); err != nil {
		return nil, errorf("dump: trace: %w", err)
	}
	emptyToNil(d)
	d.Sort()
	return d, nil
}

// emptyToNil makes an empty table nil, as the other stores' dumps have it,
// so that dumps compare with reflect.DeepEqual too.
func emptyToNil(d *model.Dump) {
	if len(d.Executions) == 0 {
		d.Executions = nil
	}
	if len(d.Outbox) == 0 {
		d.Outbox = nil
	}
	if len(d.Processed) == 0 {
		d.Processed = nil
	}
	if len(d.Timers) == 0 {
		d.Timers = nil
	}
	if len(d.Spawns) == 0 {
		d.Spawns = nil
	}
	if len(d.Trace) == 0 {
		d.Trace = nil
	}
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
	if r.Data, err = canonical(c[2]); err != nil {
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
