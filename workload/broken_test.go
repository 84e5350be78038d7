package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// breakingStore breaks for good (model.Breakable), as an adapter that
// crashes does: from its after-th commit on, or once breakNow is set, every
// call fails at once with an error wrapping model.ErrBroken.
type breakingStore struct {
	model.Store
	after    int64
	commits  atomic.Int64
	breakNow atomic.Bool
	mu       sync.Mutex
	broken   error
}

func (s *breakingStore) Broken() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

func (s *breakingStore) check(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil && (s.breakNow.Load() || (op == "commit" && s.commits.Add(1) >= s.after)) {
		s.broken = fmt.Errorf("adapter \"fake\": %s: it exited: exit status 11: %w", op, model.ErrBroken)
		return s.broken
	}
	if s.broken != nil {
		return fmt.Errorf("adapter \"fake\" is unusable after an earlier failure: %w", s.broken)
	}
	return nil
}

func (s *breakingStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if err := s.check("commit"); err != nil {
		return err
	}
	return s.Store.Commit(ctx, exe, b)
}

func (s *breakingStore) Save(ctx context.Context, exe *model.Execution) error {
	if err := s.check("save"); err != nil {
		return err
	}
	return s.Store.Save(ctx, exe)
}

func (s *breakingStore) Load(ctx context.Context, id string) (*model.Execution, error) {
	if err := s.check("load"); err != nil {
		return nil, err
	}
	return s.Store.Load(ctx, id)
}

func (s *breakingStore) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	if err := s.check("pending_outbox"); err != nil {
		return nil, err
	}
	return s.Store.PendingOutbox(ctx)
}

func (s *breakingStore) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	if err := s.check("due_timers"); err != nil {
		return nil, err
	}
	return s.Store.DueTimers(ctx, now)
}

// TestBrokenStoreEndsTheRun: a store that breaks for good ends the traffic
// at once, is not healed (no retries for the recovery bound: it would fail
// every read the same way), and the run says so with the store's first
// error (Result.Broken), not as a store that did not recover. A store that
// breaks during the heal ends the heal at once the same way.
func TestBrokenStoreEndsTheRun(t *testing.T) {
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("in the heal=%v", during), func(t *testing.T) {
			s := &breakingStore{Store: model.NewReference(model.DefaultConfig()), after: 20}
			cfg := Config{Clients: 4, Executions: 2, Duration: 10 * time.Second, Seed: 1, RecoveryBound: 10 * time.Second}
			if during {
				s.after = math.MaxInt64
				cfg.Duration, cfg.Ops = 0, 200
				cfg.During = func(ctx context.Context, _ func() int64) error {
					<-ctx.Done() // the traffic is over
					s.breakNow.Store(true)
					return nil
				}
			}
			start := time.Now()
			res, err := Run(context.Background(), s, cfg)
			if err != nil {
				t.Fatalf("a store that broke is a finding, not an error: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the run took %v after the store broke", d)
			}
			if !errors.Is(res.Broken, model.ErrBroken) || !strings.Contains(res.Broken.Error(), "exit status 11") || strings.Contains(res.Broken.Error(), "unusable") {
				t.Errorf("Broken = %v, want the store's first error", res.Broken)
			}
			if res.NotRecovered != nil || res.Stalled != nil {
				t.Errorf("a broken store reported as not recovered (%v) or stalled (%v)", res.NotRecovered, res.Stalled)
			}
		})
	}
}
