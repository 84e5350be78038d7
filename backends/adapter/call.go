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

// Is makes a call that broke the store an ErrBroken.
func (e *callError) Is(target error) bool { return e.broken && target == ErrBroken }

// exitGrace is how long a call waits, once the adapter has exited, for a
// response it may have written just before: the reader goroutine takes it
// from the pipe at once, and only a descendant that kept the pipe open
// (a wrapper's background child) stops stdout from ending with the exit.
const exitGrace = 200 * time.Millisecond

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
	var r lineResult
	select {
	case r = <-p.lines:
	case <-p.stop:
		return wire.Response{}, p.lost(ctx, what, true, timeout, nil)
	case <-p.done:
		// The adapter exited. Its stdout ends with it unless a process it
		// left behind holds the pipe, which must not hide the exit until
		// the timeout: take a line written just before the exit, if any.
		select {
		case r = <-p.lines:
		case <-time.After(exitGrace):
			return wire.Response{}, p.lost(ctx, what, true, timeout, errExited)
		}
	}
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
}

// errExited is a call's cause when the adapter exited without answering
// while something else kept its stdout open.
var errExited = errors.New("the adapter exited")

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
		msg := fmt.Sprintf("%s: no response within %v; the adapter was killed", what, timeout)
		if t := p.stderrTail(); t != "" {
			msg += "; its stderr ended: " + t
		}
		return &callError{broken: true, sent: sent, err: errors.New(msg)}
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
	switch {
	case errors.Is(cause, errExited):
		msg = fmt.Sprintf("%s: the adapter exited with the request in flight (a process it started still holds its stdout); %s", what, how)
	case cause == nil || errors.Is(cause, errClosedStdout):
		msg = fmt.Sprintf("%s: the adapter closed its stdout with the request in flight; %s", what, how)
	}
	if t := p.stderrTail(); t != "" {
		msg += "; its stderr ended: " + t
	}
	return &callError{broken: true, sent: sent, err: errors.New(msg)}
}

// stderrTail is the last lines the adapter wrote to stderr, once its
// stderr has ended or briefly waited for: an exited adapter's last lines
// are in the pipe already, and a descendant that holds the pipe open must
// not hold up the error.
func (p *process) stderrTail() string {
	wait := time.Second
	if p.exited() {
		wait = exitGrace
	}
	select {
	case <-p.stderrDone:
	case <-time.After(wait):
	}
	return p.stderr.String()
}
