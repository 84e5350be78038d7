package rqlite

import (
	"context"

	"github.com/storecheck/storecheck/backends/internal/rowconv"
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
	if d.Executions, err = convert(res[0].Rows, rowconv.ExecutionCols, rowconv.ExecutionRow); err != nil {
		return nil, errorf("dump: executions: %w", err)
	}
	if d.Outbox, err = convert(res[1].Rows, rowconv.OutboxCols, rowconv.OutboxRow); err != nil {
		return nil, errorf("dump: outbox: %w", err)
	}
	if d.Processed, err = convert(res[2].Rows, rowconv.ProcessedCols, rowconv.ProcessedRow); err != nil {
		return nil, errorf("dump: processed_events: %w", err)
	}
	if d.Timers, err = convert(res[3].Rows, rowconv.TimerCols, rowconv.TimerRow); err != nil {
		return nil, errorf("dump: timers: %w", err)
	}
	if d.Spawns, err = convert(res[4].Rows, rowconv.SpawnCols, rowconv.SpawnRow); err != nil {
		return nil, errorf("dump: spawns: %w", err)
	}
	if d.Trace, err = convert(res[5].Rows, rowconv.TraceCols, rowconv.TraceRow); err != nil {
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
