package adapter

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// Commit implements model.Store.
func (s *Store) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	a, err := wire.NewCommitArgs(exe, b)
	if err != nil {
		return s.rejected(wire.OpCommit, err)
	}
	return s.write(ctx, wire.OpCommit, exe, a)
}

// Save implements model.Store.
func (s *Store) Save(ctx context.Context, exe *model.Execution) error {
	data, err := wire.EncodeExecution(exe)
	if err != nil {
		return s.rejected(wire.OpSave, err)
	}
	return s.write(ctx, wire.OpSave, exe, wire.ExecutionArgs{Execution: data})
}

// write runs commit or save; exe.Version advances only on success.
func (s *Store) write(ctx context.Context, op string, exe *model.Execution, args any) error {
	a, err := s.do(ctx, op, args)
	if err != nil {
		return err
	}
	var v wire.VersionResult
	if err := s.decode(op, a, &v); err != nil {
		return err
	}
	if v.Version != exe.Version+1 {
		return s.violation(op, a.where, fmt.Errorf("execution %q committed from version %d reports version %d, not %d", exe.ID, exe.Version, v.Version, exe.Version+1))
	}
	exe.Version = v.Version
	return nil
}

// Load implements model.Store.
func (s *Store) Load(ctx context.Context, id string) (*model.Execution, error) {
	a, err := s.do(ctx, wire.OpLoad, wire.IDArgs{ExecutionID: id})
	if err != nil {
		return nil, err
	}
	exe, err := wire.DecodeExecution(a.result)
	if err != nil {
		return nil, s.violation(wire.OpLoad, a.where, fmt.Errorf("malformed execution: %w: %s", err, quote(a.result)))
	}
	return exe, nil
}

// LoadForEvent implements model.Store.
func (s *Store) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	a, err := s.do(ctx, wire.OpLoadForEvent, wire.EventArgs{ExecutionID: id, EventID: eventID})
	if err != nil {
		return nil, false, err
	}
	var r wire.LoadForEventResult
	if err := s.decode(wire.OpLoadForEvent, a, &r); err != nil {
		return nil, false, err
	}
	exe, err := wire.DecodeExecution(r.Execution)
	if err != nil {
		return nil, false, s.violation(wire.OpLoadForEvent, a.where, fmt.Errorf("malformed execution: %w: %s", err, quote(a.result)))
	}
	return exe, r.Processed, nil
}

// ListExecutions implements model.Store.
func (s *Store) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	a, err := s.do(ctx, wire.OpListExecutions, wire.NewListArgs(f))
	if err != nil {
		return model.Page{}, err
	}
	var p wire.Page
	if err := s.decode(wire.OpListExecutions, a, &p); err != nil {
		return model.Page{}, err
	}
	return p.ModelPage(), nil
}

// IsProcessed implements model.Store.
func (s *Store) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	a, err := s.do(ctx, wire.OpIsProcessed, wire.EventArgs{ExecutionID: id, EventID: eventID})
	if err != nil {
		return false, err
	}
	var done *bool
	if err := s.decode(wire.OpIsProcessed, a, &done); err != nil {
		return false, err
	}
	if done == nil {
		return false, s.violation(wire.OpIsProcessed, a.where, fmt.Errorf("result null, want true or false"))
	}
	return *done, nil
}

// PendingOutbox implements model.Store.
func (s *Store) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	return list(ctx, s, wire.OpPendingOutbox, nil, wire.ModelOutbox)
}

// AckOutbox implements model.Store.
func (s *Store) AckOutbox(ctx context.Context, seq int64) error {
	_, err := s.do(ctx, wire.OpAckOutbox, wire.SeqArgs{Seq: seq})
	return err
}

// PendingSpawns implements model.Store.
func (s *Store) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	return list(ctx, s, wire.OpPendingSpawns, nil, wire.ModelSpawns)
}

// AckSpawn implements model.Store.
func (s *Store) AckSpawn(ctx context.Context, seq int64) error {
	_, err := s.do(ctx, wire.OpAckSpawn, wire.SeqArgs{Seq: seq})
	return err
}

// DueTimers implements model.Store.
func (s *Store) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	if err := wire.CheckFinite(now); err != nil {
		return nil, s.rejected(wire.OpDueTimers, err)
	}
	return list(ctx, s, wire.OpDueTimers, wire.NowArgs{Now: now}, func(ts []wire.DueTimer) ([]model.DueTimer, error) {
		return wire.ModelTimers(ts), nil
	})
}

// DeleteTimer implements model.Store.
func (s *Store) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	if err := wire.CheckFinite(fireAt); err != nil {
		return s.rejected(wire.OpDeleteTimer, err)
	}
	_, err := s.do(ctx, wire.OpDeleteTimer, wire.TimerArgs{ExecutionID: id, Path: path, FireAt: fireAt})
	return err
}

// AppendTrace implements model.Store.
func (s *Store) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	a, err := wire.NewTraceArgs(id, entry)
	if err != nil {
		return s.rejected(wire.OpAppendTrace, err)
	}
	_, err = s.do(ctx, wire.OpAppendTrace, a)
	return err
}

// ReadTrace implements model.Store.
func (s *Store) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return list(ctx, s, wire.OpReadTrace, wire.IDArgs{ExecutionID: id}, wire.ModelTrace)
}

// list runs an operation whose result is an array (never null), and
// converts it with convert; a result that does not convert is a protocol
// violation.
func list[W, M any](ctx context.Context, s *Store, op string, args any, convert func([]W) ([]M, error)) ([]M, error) {
	a, err := s.do(ctx, op, args)
	if err != nil {
		return nil, err
	}
	if len(a.result) == 0 || a.result[0] != '[' {
		return nil, s.violation(op, a.where, fmt.Errorf("result %s, want an array", quote(a.result)))
	}
	var items []W
	if err := s.decode(op, a, &items); err != nil {
		return nil, err
	}
	out, err := convert(items)
	if err != nil {
		return nil, s.violation(op, a.where, err)
	}
	return out, nil
}

// dump runs the optional dump.
func (s *Store) dump(ctx context.Context) (*model.Dump, error) {
	a, err := s.do(ctx, wire.OpDump, nil)
	if err != nil {
		return nil, err
	}
	var d wire.Dump
	if err := s.decode(wire.OpDump, a, &d); err != nil {
		return nil, err
	}
	out, err := d.ModelDump()
	if err != nil {
		return nil, fmt.Errorf("adapter %s: dump: %w", s.name, err)
	}
	return out, nil
}

// reset runs the optional reset.
func (s *Store) reset(ctx context.Context) error {
	_, err := s.do(ctx, wire.OpReset, nil)
	return err
}
