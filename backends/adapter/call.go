package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storecheck/storecheck/backends/adapter/wire"
)

// callError is a request that got no well-formed answer.
type callError struct {
	// broken: the adapter broke the protocol (a malformed or unexpected
	// line, an exit or a hang of its own); the store is unusable after it.
	broken bool
	// sent: the request may have reached the adapter, so a write may have
	// been applied.
	sent bool
	err  error
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// call sends one request line and reads its response. The process is
// killed when ctx ends or timeout passes first; the error is then a
// *callError, as for every answer that is not a well-formed response to
// this request.
func (p *process) call(ctx context.Context, id uint64, op string, line []byte, timeout time.Duration) (wire.Response, error) {
	what := fmt.Sprintf("adapter %s (pid %d): %s (request %d)", p.name, p.pid, op, id)
	timer := time.AfterFunc(timeout, func() {
		p.timedOut.Store(true)
		p.kill()
	})
	defer timer.Stop()
	defer context.AfterFunc(ctx, p.kill)()

	if n, err := p.stdin.Write(line); err != nil {
		return wire.Response{}, p.lost(ctx, what, n > 0, timeout, fmt.Errorf("write the request: %w", err))
	}
	select {
	case r := <-p.lines:
		if r.err != nil {
			return wire.Response{}, p.lost(ctx, what, true, timeout, r.err)
		}
		p.lineNo++
		resp, err := wire.DecodeResponse(r.line)
		if err != nil {
			p.kill()
			return wire.Response{}, &callError{broken: true, sent: true,
				err: fmt.Errorf("%s: malformed response on stdout line %d: %w: %s", what, p.lineNo, err, quote(r.line))}
		}
		if resp.ID != id {
			p.kill()
			return wire.Response{}, &callError{broken: true, sent: true,
				err: fmt.Errorf("%s: stdout line %d answers request %d, not %d: %s", what, p.lineNo, resp.ID, id, quote(r.line))}
		}
		return resp, nil
	case <-p.stop:
		return wire.Response{}, p.lost(ctx, what, true, timeout, nil)
	}
}

// lost explains a request that got no response: the caller's context
// ended, the timeout passed, a fault was injected, or the adapter went away
// on its own. It kills the process.
func (p *process) lost(ctx context.Context, what string, sent bool, timeout time.Duration, cause error) error {
	switch {
	case ctx.Err() != nil:
		p.kill()
		return &callError{sent: sent, err: fmt.Errorf("%s: %w; the adapter was killed", what, ctx.Err())}
	case p.timedOut.Load():
		p.kill()
		return &callError{broken: true, sent: sent, err: fmt.Errorf("%s: no response within %v; the adapter was killed", what, timeout)}
	case p.signalled.Load():
		p.kill()
		return &callError{sent: sent, err: fmt.Errorf("%s: no response: the adapter process was signalled (an injected fault)", what)}
	case p.closing.Load():
		p.kill()
		return &callError{sent: sent, err: fmt.Errorf("%s: the store was closed with the request in flight", what)}
	}
	// The adapter went away by itself: say how, with what it said last.
	select {
	case <-p.done:
	case <-time.After(time.Second):
	}
	select {
	case <-p.stderrDone:
	case <-time.After(time.Second):
	}
	how := "it is still running and was killed"
	select {
	case <-p.done:
		how = "it exited with status 0"
		if p.waitE != nil {
			how = "it exited: " + p.waitE.Error()
		}
	default:
	}
	p.kill()
	msg := fmt.Sprintf("%s: no response: %v; %s", what, cause, how)
	if cause == nil || errors.Is(cause, errClosedStdout) {
		msg = fmt.Sprintf("%s: the adapter closed its stdout with the request in flight; %s", what, how)
	}
	if t := p.stderr.String(); t != "" {
		msg += "; its stderr ended: " + t
	}
	return &callError{broken: true, sent: sent, err: errors.New(msg)}
}
