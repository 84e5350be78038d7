package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// answer is the result of one operation and where it came from.
type answer struct {
	result json.RawMessage
	where  string // e.g. "pid 12, request 7, stdout line 9", for errors
}

// do runs one operation on some process and returns its result. A failure
// of a write is marked model.ErrNotApplied when the request provably did
// nothing; otherwise its outcome is unknown.
func (s *Store) do(ctx context.Context, op string, args any) (answer, error) {
	if err := s.usable(); err != nil {
		return answer{}, notApplied(op, err)
	}
	id := s.ids.Add(1)
	line, err := wire.EncodeRequest(id, op, args)
	if err != nil {
		return answer{}, s.rejected(op, err)
	}
	p, err := s.acquire(ctx)
	if err != nil {
		return answer{}, notApplied(op, err)
	}
	defer s.release(p)
	if err := s.syncTraceMax(ctx, p); err != nil {
		return answer{}, notApplied(op, err)
	}
	resp, err := p.call(ctx, id, op, line, s.opt.Timeout)
	if err != nil {
		return answer{}, s.failed(op, err)
	}
	a := answer{result: resp.Result, where: fmt.Sprintf("pid %d, request %d, stdout line %d", p.pid, id, p.lineNo)}
	if !resp.OK {
		return answer{}, s.answerError(op, a.where, resp.Error)
	}
	return a, nil
}

// syncTraceMax tells p the store's trace cap if it was told another.
func (s *Store) syncTraceMax(ctx context.Context, p *process) error {
	tm := int(s.traceMax.Load())
	if p.traceMax == tm {
		return nil
	}
	id := s.ids.Add(1)
	line, err := wire.EncodeRequest(id, wire.OpSetTraceMax, wire.TraceMaxArgs{TraceMax: tm})
	if err != nil {
		return err
	}
	resp, err := p.call(ctx, id, wire.OpSetTraceMax, line, s.opt.Timeout)
	if err != nil {
		return s.failed(wire.OpSetTraceMax, err)
	}
	if !resp.OK {
		return s.answerError(wire.OpSetTraceMax, fmt.Sprintf("pid %d, request %d", p.pid, id), resp.Error)
	}
	p.traceMax = tm
	return nil
}

// failed turns a call's error into the operation's: a protocol violation
// breaks the store; a write that may have reached the adapter has an
// unknown outcome.
func (s *Store) failed(op string, err error) error {
	var ce *callError
	if !errors.As(err, &ce) {
		return err
	}
	if ce.broken {
		s.breakWith(ce)
	}
	if !ce.sent {
		return notApplied(op, ce)
	}
	return ce
}

// answerError turns an error answer into the model's error.
func (s *Store) answerError(op, where string, e *wire.Error) error {
	switch e.Kind {
	case wire.KindConflict:
		if op != wire.OpCommit && op != wire.OpSave {
			return s.violation(op, where, fmt.Errorf("a conflict answer (only commit and save conflict): %s", e.Message))
		}
		return &model.StoreConflict{ID: e.ExecutionID, Expected: e.Expected, Found: e.Found}
	case wire.KindNotApplied:
		return fmt.Errorf("adapter %s: %s: %w: %s", s.name, op, model.ErrNotApplied, e.Message)
	case wire.KindInvalidArgument:
		if wire.IsWrite(op) {
			return fmt.Errorf("adapter %s: %s: %w (%w): %s", s.name, op, model.ErrInvalidArgument, model.ErrNotApplied, e.Message)
		}
		return fmt.Errorf("adapter %s: %s: %w: %s", s.name, op, model.ErrInvalidArgument, e.Message)
	}
	return fmt.Errorf("adapter %s: %s failed, outcome unknown: %s", s.name, op, e.Message)
}

// violation breaks the store with a malformed answer; the operation's
// outcome is unknown.
func (s *Store) violation(op, where string, err error) error {
	err = asBroken(fmt.Errorf("adapter %s (%s): %s: protocol violation: %w", s.name, where, op, err))
	s.breakWith(err)
	return err
}

// decode reads an operation's result into v; a result of the wrong shape
// is a protocol violation.
func (s *Store) decode(op string, a answer, v any) error {
	if err := wire.Decode(a.result, v); err != nil {
		return s.violation(op, a.where, fmt.Errorf("malformed result: %w: %s", err, quote(a.result)))
	}
	return nil
}

// rejected is an argument the protocol cannot carry: nothing was sent.
func (s *Store) rejected(op string, err error) error {
	return notApplied(op, fmt.Errorf("adapter %s: %s: %w", s.name, op, err))
}

// notApplied marks a write's error as provably changing nothing.
func notApplied(op string, err error) error {
	if !wire.IsWrite(op) || errors.Is(err, model.ErrNotApplied) {
		return err
	}
	return fmt.Errorf("%w: %w", model.ErrNotApplied, err)
}
