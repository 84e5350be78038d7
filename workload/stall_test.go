package workload

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// hangingStore answers its first loads and commits, then holds each one
// until the caller gives up (a server that spins, say); slow delays every
// answer. With writesOnly only commits hang, and loads are answered at once
// (replicas that serve reads in front of a primary that takes no write).
// The runs below draw only loads and commits (stallMix).
type hangingStore struct {
	model.Store
	answer     int64 // calls answered before the hang; 0 never hangs
	slow       time.Duration
	writesOnly bool
	calls      atomic.Int64
}

func (s *hangingStore) wait(ctx context.Context) error {
	if s.answer > 0 && s.calls.Add(1) > s.answer {
		<-ctx.Done()
		return ctx.Err()
	}
	if s.slow > 0 {
		select {
		case <-time.After(s.slow):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *hangingStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	if s.writesOnly {
		return s.Store.Load(ctx, id)
	}
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.Load(ctx, id)
}

func (s *hangingStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.Commit(ctx, exe, b)
}

// stallMix draws the steps that call only Load and Commit.
var stallMix = Mix{Commit: 3, Load: 1}

// stallConfig is the workload of the stall runs: short call timeouts and
// stall bound, and far more steps than the traffic should take. Duration
// is a backstop only: the stall must end the traffic first.
func stallConfig() Config {
	return Config{Clients: 4, Executions: 2, Ops: 100_000, Duration: time.Minute, Seed: 5, Mix: stallMix,
		OpTimeout: 50 * time.Millisecond, StallBound: 400 * time.Millisecond, RecoveryBound: 300 * time.Millisecond}
}

// TestStalledStoreStopsTheTraffic: a store that stops answering stops the
// traffic after the stall bound instead of running every planned step into
// its timeout; the stall is a finding (Result.Stalled), and what was
// recorded is still healed and checked.
func TestStalledStoreStopsTheTraffic(t *testing.T) {
	s := &hangingStore{Store: model.NewReference(model.DefaultConfig()), answer: 200}
	cfg := stallConfig()
	res, err := Run(context.Background(), s, cfg)
	if err != nil {
		t.Fatalf("a stalled store is a finding, not an error: %v", err)
	}
	if !errors.Is(res.Stalled, ErrStalled) || !strings.Contains(res.Stalled.Error(), "50ms timeout") {
		t.Fatalf("Stalled = %v, want ErrStalled naming the call timeout", res.Stalled)
	}
	if res.Steps >= cfg.Ops {
		t.Errorf("%d steps of %d: the traffic did not stop", res.Steps, cfg.Ops)
	}
	if !errors.Is(res.NotRecovered, linearizability.ErrNotRecovered) {
		t.Errorf("the store never answered again, yet NotRecovered = %v", res.NotRecovered)
	}
	if res.Verdict != linearizability.Ok {
		t.Errorf("the history up to the stall is correct: verdict %s, %v", res.Verdict, res.Err)
	}
	t.Logf("%d steps; %v", res.Steps, res.Stalled)
}

// TestWriteStallStopsTheTraffic: a store that answers every read but no
// write stops the traffic after the stall bound too (before, its reads kept
// the watch content, and a run on a wedged sqld primary behind live
// replicas went on for Ops × OpTimeout / Clients), as a stall of the
// writes: ErrStalled, named so.
func TestWriteStallStopsTheTraffic(t *testing.T) {
	s := &hangingStore{Store: model.NewReference(model.DefaultConfig()), answer: 100, writesOnly: true}
	cfg := stallConfig()
	res, err := Run(context.Background(), s, cfg)
	if err != nil {
		t.Fatalf("a store that takes no write is a finding, not an error: %v", err)
	}
	if !errors.Is(res.Stalled, ErrStalled) || !strings.Contains(res.Stalled.Error(), "answered no write within its 50ms timeout") {
		t.Fatalf("Stalled = %v, want ErrStalled naming the writes and the call timeout", res.Stalled)
	}
	if res.Steps >= cfg.Ops {
		t.Errorf("%d steps of %d: the traffic did not stop", res.Steps, cfg.Ops)
	}
	if res.Verdict != linearizability.Ok {
		t.Errorf("the history up to the stall is correct: verdict %s, %v", res.Verdict, res.Err)
	}
	t.Logf("%d steps; %v", res.Steps, res.Stalled)
}

// A slow store that answers every call in time is not a stall, however
// long the run; nor does a bound at or below the call timeout pass.
func TestSlowStoreIsNotAStall(t *testing.T) {
	s := &hangingStore{Store: model.NewReference(model.DefaultConfig()), slow: 20 * time.Millisecond}
	cfg := Config{Clients: 2, Executions: 2, Ops: 60, Seed: 5, Mix: stallMix, OpTimeout: time.Second, StallBound: 1100 * time.Millisecond}
	res, err := Run(context.Background(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stalled != nil || res.Steps != cfg.Ops {
		t.Errorf("Stalled = %v after %d of %d steps", res.Stalled, res.Steps, cfg.Ops)
	}
	cfg.StallBound = cfg.OpTimeout
	if _, err := Run(context.Background(), s, cfg); !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "stall bound") {
		t.Errorf("a stall bound no longer than the call timeout: %v", err)
	}
}

// A write that timed out with none after it, while reads go on being
// answered, is no stall of the writes: none waits. One that waits is.
func TestWriteStallNeedsAWriteWaiting(t *testing.T) {
	watch := &stallWatch{bound: 100 * time.Millisecond, opTimeout: 10 * time.Millisecond, start: time.Now()}
	watch.begun(true)
	watch.ended(true, false) // timed out; no write since
	reads, stopReads := context.WithCancel(context.Background())
	defer stopReads()
	go func() {
		for reads.Err() == nil {
			watch.begun(false)
			watch.ended(false, true)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	watchFor := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var cause error
		watch.run(ctx, func(err error) { cause = err })
		return cause
	}
	if err := watchFor(400 * time.Millisecond); err != nil {
		t.Fatalf("no write waiting, reads answered: %v", err)
	}
	watch.begun(true) // waits, unanswered
	if err := watchFor(2 * time.Second); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "no write") {
		t.Errorf("a write waiting past the bound: %v; want a stall of the writes", err)
	}
}
