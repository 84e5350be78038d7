package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// session is one adapter process's state: the store its hello opened.
type session struct {
	open  Opener
	opt   Options
	store model.Store
}

// handle answers one request; done is set after shutdown.
func (s *session) handle(ctx context.Context, req wire.Request) (line []byte, done bool) {
	result, err := s.dispatch(ctx, req)
	if err == nil {
		line, err = wire.OKResponse(req.ID, result)
	}
	if err != nil {
		line, err = wire.ErrorResponse(req.ID, classify(err))
	}
	if err != nil { // an Error always encodes; this is defensive
		line = []byte(fmt.Sprintf(`{"id":%d,"ok":false,"error":{"kind":"unknown","message":"encode response"}}`+"\n", req.ID))
	}
	return line, req.Op == wire.OpShutdown
}

// classify maps a store error onto the protocol's error kinds.
func classify(err error) wire.Error {
	if c, ok := model.AsConflict(err); ok {
		return wire.Error{Kind: wire.KindConflict, Message: c.Error(), ExecutionID: c.ID, Expected: c.Expected, Found: c.Found}
	}
	kind := wire.KindUnknown
	switch {
	case errors.Is(err, model.ErrInvalidArgument):
		kind = wire.KindInvalidArgument
	case errors.Is(err, model.ErrNotApplied):
		kind = wire.KindNotApplied
	}
	return wire.Error{Kind: kind, Message: err.Error()}
}

// args decodes a request's args; a malformed one is an invalid argument.
func args[T any](req wire.Request) (T, error) {
	var a T
	if err := wire.Decode(req.Args, &a); err != nil {
		return a, fmt.Errorf("%w: %s args: %w", model.ErrInvalidArgument, req.Op, err)
	}
	return a, nil
}

// dispatch runs one request against the store; a nil result is null.
func (s *session) dispatch(ctx context.Context, req wire.Request) (any, error) {
	if req.Op == wire.OpHello {
		return s.hello(ctx, req)
	}
	if s.store == nil {
		return nil, fmt.Errorf("%w: %s before hello", model.ErrNotApplied, req.Op)
	}
	if result, ok, err := contractOp(ctx, s.store, req); ok {
		return result, err
	}
	switch req.Op {
	case wire.OpShutdown:
		return nil, s.close()
	case wire.OpDump:
		if d, ok := s.store.(model.Dumper); ok {
			dump, err := d.Dump(ctx)
			if err != nil {
				return nil, err
			}
			return wire.NewDump(dump), nil
		}
	case wire.OpReset:
		if r, ok := s.store.(model.Resetter); ok {
			return nil, r.Reset(ctx)
		}
	case wire.OpSetTraceMax:
		if t, ok := s.store.(model.TraceMaxSetter); ok {
			a, err := args[wire.TraceMaxArgs](req)
			if err != nil {
				return nil, err
			}
			t.SetTraceMax(a.TraceMax)
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown operation %q", model.ErrNotApplied, req.Op)
}

// hello opens the store and says what it supports.
func (s *session) hello(ctx context.Context, req wire.Request) (any, error) {
	h, err := args[wire.Hello](req)
	if err != nil {
		return nil, err
	}
	if h.Protocol != wire.Version {
		return nil, fmt.Errorf("%w: protocol %d not supported (this adapter speaks %d)", model.ErrNotApplied, h.Protocol, wire.Version)
	}
	if s.store != nil {
		return nil, fmt.Errorf("%w: hello twice", model.ErrNotApplied)
	}
	st, err := s.open(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("%w: open the store: %w", model.ErrNotApplied, err)
	}
	s.store = st
	ops := append([]string(nil), wire.RequiredOps...)
	if _, ok := st.(model.Dumper); ok {
		ops = append(ops, wire.OpDump)
	}
	if _, ok := st.(model.Resetter); ok {
		ops = append(ops, wire.OpReset)
	}
	if _, ok := st.(model.TraceMaxSetter); ok {
		ops = append(ops, wire.OpSetTraceMax)
	}
	return wire.HelloResult{Protocol: wire.Version, Name: s.opt.Name, Ops: ops, MaxProcesses: s.opt.MaxProcesses}, nil
}

// close closes the store once.
func (s *session) close() error {
	if s.store == nil {
		return nil
	}
	st := s.store
	s.store = nil
	if err := st.Close(); err != nil {
		return fmt.Errorf("serve: close the store: %w", err)
	}
	return nil
}
