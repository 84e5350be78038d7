package adapter

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

// spawn starts one more adapter process and has it answer hello. The first
// answer is the store's; every later one must be the same.
func (s *Store) spawn(ctx context.Context) (*process, error) {
	s.mu.Lock()
	index := s.started
	s.started++
	s.mu.Unlock()
	p, err := startProcess(s.argv, s.name, s.opt.Logger)
	if err != nil {
		return nil, err
	}
	h, err := s.helloOf(ctx, p, index)
	if err != nil {
		p.kill()
		_ = p.reap(0)
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case index == 0:
		s.hello = h
	case h.Protocol != s.hello.Protocol || h.MaxProcesses != s.hello.MaxProcesses || !slices.Equal(h.Ops, s.hello.Ops):
		err = fmt.Errorf("adapter %s (pid %d): process %d answered hello with %+v, unlike the first process (%+v)", s.name, p.pid, index, h, s.hello)
	case s.closed:
		err = fmt.Errorf("adapter %s: the store is closed", s.name)
	}
	if err != nil {
		p.kill()
		_ = p.reap(0)
		return nil, err
	}
	s.live[p] = struct{}{}
	return p, nil
}

// helloOf sends hello to a new process and checks its answer.
func (s *Store) helloOf(ctx context.Context, p *process, index int) (wire.HelloResult, error) {
	id := s.ids.Add(1)
	tm := int(s.traceMax.Load())
	line, err := wire.EncodeRequest(id, wire.OpHello, wire.Hello{Protocol: wire.Version, Store: s.info, TraceMax: tm, Process: index})
	if err != nil {
		return wire.HelloResult{}, err
	}
	resp, err := p.call(ctx, id, wire.OpHello, line, s.opt.HelloTimeout)
	if err != nil {
		return wire.HelloResult{}, err
	}
	what := fmt.Sprintf("adapter %s (pid %d): hello", s.name, p.pid)
	if !resp.OK {
		return wire.HelloResult{}, fmt.Errorf("%s refused: %s: %s", what, resp.Error.Kind, resp.Error.Message)
	}
	var h wire.HelloResult
	if err := wire.Decode(resp.Result, &h); err != nil {
		return wire.HelloResult{}, fmt.Errorf("%s: malformed answer on stdout line %d: %w: %s", what, p.lineNo, err, quote(resp.Result))
	}
	if err := h.Check(); err != nil {
		return wire.HelloResult{}, fmt.Errorf("%s: %w", what, err)
	}
	p.traceMax = tm
	return h, nil
}

// usable returns the error every operation fails with once the store is
// broken or closed.
func (s *Store) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("adapter %s: the store is closed", s.name)
	case s.broken != nil:
		return fmt.Errorf("adapter %s is unusable after an earlier failure: %w", s.name, s.broken)
	}
	return nil
}

// breakWith records the first protocol violation.
func (s *Store) breakWith(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = asBroken(err)
	}
}

// Broken implements model.Breakable: the adapter's first protocol
// violation (wrapping ErrBroken), after which every operation fails at
// once, or nil. A store whose Open context ended, or that was closed, is
// not broken by its adapter: Broken is nil for it.
func (s *Store) Broken() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.broken, ErrBroken) {
		return s.broken
	}
	return nil
}

// ErrBroken is model.ErrBroken: every error of a store whose adapter broke
// its protocol (docs/ADAPTER.md §6) wraps it, the first one and every later
// operation's alike.
var ErrBroken = model.ErrBroken

// brokenError marks an adapter's protocol violation as ErrBroken without
// changing its message.
type brokenError struct{ err error }

func (e *brokenError) Error() string        { return e.err.Error() }
func (e *brokenError) Unwrap() error        { return e.err }
func (e *brokenError) Is(target error) bool { return target == ErrBroken }

// asBroken returns err marked as ErrBroken.
func asBroken(err error) error {
	if errors.Is(err, ErrBroken) {
		return err
	}
	return &brokenError{err}
}

// acquire takes an idle process once fewer than the maximum of operations
// are in flight. When none is idle and the pool may grow, it starts one in
// the background and takes whichever process is free first: a slow-starting
// adapter never holds up operations that a running one can serve, and a
// caller's deadline never kills a process in the middle of its hello.
func (s *Store) acquire(ctx context.Context) (*process, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("adapter %s: waiting for a free process: %w", s.name, ctx.Err())
	}
	for {
		if err := s.usable(); err != nil {
			<-s.slots
			return nil, err
		}
		s.mu.Lock()
		if n := len(s.idle); n > 0 {
			p := s.idle[n-1]
			s.idle = s.idle[:n-1]
			if p.exited() { // killed while idle (an injected fault): replace it
				delete(s.live, p)
				s.mu.Unlock()
				_ = p.reap(0)
				continue
			}
			s.mu.Unlock()
			return p, nil
		}
		// One process per operation in flight, at most: len(s.slots).
		if len(s.live)+s.spawning < len(s.slots) {
			s.spawning++
			s.spawns.Go(s.grow)
		}
		s.mu.Unlock()
		select {
		case <-s.avail:
		case <-ctx.Done():
			<-s.slots
			return nil, fmt.Errorf("adapter %s: waiting for a free process: %w", s.name, ctx.Err())
		}
	}
}

// grow starts one more process for the pool, bounded by the store's life
// and the hello timeout. A process that cannot start breaks the store.
func (s *Store) grow() {
	p, err := s.spawn(s.life)
	s.mu.Lock()
	s.spawning--
	switch {
	case err != nil && s.life.Err() == nil && s.broken == nil:
		s.broken = asBroken(fmt.Errorf("a new adapter process could not start: %w", err))
	case err == nil:
		s.idle = append(s.idle, p)
	}
	s.mu.Unlock()
	s.wake()
}

// wake tells one waiting acquire that the pool changed.
func (s *Store) wake() {
	select {
	case s.avail <- struct{}{}:
	default:
	}
}

// release gives p back to the pool, or reaps it if it is dead or the store
// is done with it.
func (s *Store) release(p *process) {
	defer func() { <-s.slots }()
	defer s.wake()
	s.mu.Lock()
	if !p.stopped() && !s.closed && s.broken == nil {
		s.idle = append(s.idle, p)
		s.mu.Unlock()
		return
	}
	delete(s.live, p)
	s.mu.Unlock()
	p.kill()
	_ = p.reap(0)
}
