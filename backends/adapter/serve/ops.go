package serve

import (
	"context"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// contractOp runs one of the contract's fourteen operations; ok is false
// for any other op.
func contractOp(ctx context.Context, st model.Store, req wire.Request) (result any, ok bool, err error) {
	switch req.Op {
	case wire.OpCommit:
		result, err = commit(ctx, st, req)
	case wire.OpSave:
		result, err = save(ctx, st, req)
	case wire.OpLoad:
		result, err = load(ctx, st, req)
	case wire.OpLoadForEvent:
		result, err = loadForEvent(ctx, st, req)
	case wire.OpListExecutions:
		result, err = list(ctx, st, req)
	case wire.OpIsProcessed:
		result, err = isProcessed(ctx, st, req)
	case wire.OpPendingOutbox:
		result, err = pendingOutbox(ctx, st)
	case wire.OpAckOutbox:
		result, err = ack(ctx, req, st.AckOutbox)
	case wire.OpPendingSpawns:
		result, err = pendingSpawns(ctx, st)
	case wire.OpAckSpawn:
		result, err = ack(ctx, req, st.AckSpawn)
	case wire.OpDueTimers:
		result, err = dueTimers(ctx, st, req)
	case wire.OpDeleteTimer:
		result, err = deleteTimer(ctx, st, req)
	case wire.OpAppendTrace:
		result, err = appendTrace(ctx, st, req)
	case wire.OpReadTrace:
		result, err = readTrace(ctx, st, req)
	default:
		return nil, false, nil
	}
	return result, true, err
}

func commit(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.CommitArgs](req)
	if err != nil {
		return nil, err
	}
	exe, b, err := a.Model()
	if err != nil {
		return nil, err
	}
	if err := st.Commit(ctx, exe, b); err != nil {
		return nil, err
	}
	return wire.VersionResult{Version: exe.Version}, nil
}

func save(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.ExecutionArgs](req)
	if err != nil {
		return nil, err
	}
	exe, err := wire.ModelExecution(a.Execution)
	if err != nil {
		return nil, err
	}
	if err := st.Save(ctx, exe); err != nil {
		return nil, err
	}
	return wire.VersionResult{Version: exe.Version}, nil
}

func load(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.IDArgs](req)
	if err != nil {
		return nil, err
	}
	exe, err := st.Load(ctx, a.ExecutionID)
	if err != nil || exe == nil {
		return nil, err
	}
	return exe, nil
}

func loadForEvent(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.EventArgs](req)
	if err != nil {
		return nil, err
	}
	exe, done, err := st.LoadForEvent(ctx, a.ExecutionID, a.EventID)
	if err != nil {
		return nil, err
	}
	res := wire.LoadForEventResult{Execution: []byte("null"), Processed: done}
	if exe != nil {
		if res.Execution, err = wire.EncodeExecution(exe); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func list(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.ListArgs](req)
	if err != nil {
		return nil, err
	}
	page, err := st.ListExecutions(ctx, a.ModelFilter())
	if err != nil {
		return nil, err
	}
	return wire.NewPage(page), nil
}

func isProcessed(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.EventArgs](req)
	if err != nil {
		return nil, err
	}
	return st.IsProcessed(ctx, a.ExecutionID, a.EventID)
}

func pendingOutbox(ctx context.Context, st model.Store) (any, error) {
	entries, err := st.PendingOutbox(ctx)
	if err != nil {
		return nil, err
	}
	return wire.NewOutbox(entries)
}

func pendingSpawns(ctx context.Context, st model.Store) (any, error) {
	entries, err := st.PendingSpawns(ctx)
	if err != nil {
		return nil, err
	}
	return wire.NewSpawns(entries), nil
}

func ack(ctx context.Context, req wire.Request, do func(context.Context, int64) error) (any, error) {
	a, err := args[wire.SeqArgs](req)
	if err != nil {
		return nil, err
	}
	return nil, do(ctx, a.Seq)
}

func dueTimers(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.NowArgs](req)
	if err != nil {
		return nil, err
	}
	timers, err := st.DueTimers(ctx, a.Now)
	if err != nil {
		return nil, err
	}
	return wire.NewTimers(timers), nil
}

func deleteTimer(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.TimerArgs](req)
	if err != nil {
		return nil, err
	}
	return nil, st.DeleteTimer(ctx, a.ExecutionID, a.Path, a.FireAt)
}

func appendTrace(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.TraceArgs](req)
	if err != nil {
		return nil, err
	}
	return nil, st.AppendTrace(ctx, a.ExecutionID, a.Entry)
}

func readTrace(ctx context.Context, st model.Store, req wire.Request) (any, error) {
	a, err := args[wire.IDArgs](req)
	if err != nil {
		return nil, err
	}
	entries, err := st.ReadTrace(ctx, a.ExecutionID)
	if err != nil {
		return nil, err
	}
	return wire.NewTrace(entries), nil
}
