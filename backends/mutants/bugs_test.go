package mutants_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// demo drives a store through a short sequence that shows one bug, and
// returns what went wrong, or "" when the store kept the contract.
type demo func(ctx context.Context, s model.Store) (string, error)

// demos shows each mutant's bug in a few sequential operations. The
// concurrency bugs (split-commit, read-check-write) need concurrent clients
// and are shown by internal/mutantrun's tests instead.
var demos = map[string]demo{
	"blind-write": func(ctx context.Context, s model.Store) (string, error) {
		if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
			return "", err
		}
		if err := s.Save(ctx, &model.Execution{ID: "a", Status: "stale"}); err == nil {
			return "a save from version 0 overwrote version 1", nil
		}
		return "", nil
	},
	"version-guard": func(ctx context.Context, s model.Store) (string, error) {
		if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
			return "", err
		}
		if err := s.Save(ctx, &model.Execution{ID: "a", Version: 1, Status: "winner"}); err != nil {
			return "", err
		}
		loser := model.Batch{Emits: []model.Emit{{Event: model.Event{Name: "leak"}}}}
		if _, ok := model.AsConflict(s.Commit(ctx, &model.Execution{ID: "a", Version: 1, Status: "loser"}, loser)); !ok {
			return "the losing commit did not conflict", nil
		}
		return pendingOutbox(ctx, s, "the losing commit's emit is pending")
	},
	"dedupe-before-cas": func(ctx context.Context, s model.Store) (string, error) {
		if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
			return "", err
		}
		// The loser's state differs from the winner's: with identical bytes
		// the seed's data guard (guarded-upsert) leaks too, by design.
		err := s.Commit(ctx, &model.Execution{ID: "a", Status: "loser"}, model.Batch{ProcessedEventID: model.Ptr("ev")})
		if _, ok := model.AsConflict(err); !ok {
			return "", fmt.Errorf("want a conflict, got %v", err)
		}
		if done, err := s.IsProcessed(ctx, "a", "ev"); err != nil || done {
			return "a conflicting commit marked its event processed", err
		}
		return "", nil
	},
	"trace-off-by-one": func(ctx context.Context, s model.Store) (string, error) {
		entries, err := appendTraces(ctx, s, 2, 4)
		if len(entries) != 2 {
			return fmt.Sprintf("trace_max 2 kept %d entries", len(entries)), err
		}
		return "", err
	},
	"trace-index-reset": func(ctx context.Context, s model.Store) (string, error) {
		entries, err := appendTraces(ctx, s, 2, 3)
		if err == nil && (len(entries) == 0 || entries[0].Index != 1) {
			return fmt.Sprintf("after a trim the ring reads %v, want indices 1, 2", indices(entries)), nil
		}
		return "", err
	},
	"stale-timer-sweep": func(ctx context.Context, s model.Store) (string, error) {
		exe := &model.Execution{ID: "a"}
		for _, at := range []float64{1, 2} {
			if err := s.Commit(ctx, exe, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "t", FireAt: at}}}); err != nil {
				return "", err
			}
		}
		if err := s.DeleteTimer(ctx, "a", "t", 1); err != nil {
			return "", err
		}
		if due, err := s.DueTimers(ctx, math.Inf(1)); err != nil || len(due) == 0 {
			return "a sweep of fire_at 1 deleted the timer re-armed at 2", err
		}
		return "", nil
	},
	"due-timers-strict": func(ctx context.Context, s model.Store) (string, error) {
		err := s.Commit(ctx, &model.Execution{ID: "a"}, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "t", FireAt: 5}}})
		if err != nil {
			return "", err
		}
		if due, err := s.DueTimers(ctx, 5); err != nil || len(due) == 0 {
			return "a timer at 5 is not due at 5", err
		}
		return "", nil
	},
	"due-timers-ignore-now": func(ctx context.Context, s model.Store) (string, error) {
		err := s.Commit(ctx, &model.Execution{ID: "a"}, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "t", FireAt: 5}}})
		if err != nil {
			return "", err
		}
		if due, err := s.DueTimers(ctx, 4); err != nil || len(due) != 0 {
			return fmt.Sprintf("at 4, due_timers lists %v, not due until 5", due), err
		}
		return "", nil
	},
	"due-timers-unordered": func(ctx context.Context, s model.Store) (string, error) {
		for _, c := range []struct {
			id string
			at float64
		}{{"a", 2}, {"b", 1}} {
			err := s.Commit(ctx, &model.Execution{ID: c.id}, model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "t", FireAt: c.at}}})
			if err != nil {
				return "", err
			}
		}
		due, err := s.DueTimers(ctx, 5)
		if err == nil && (len(due) != 2 || due[0].FireAt != 1) {
			return fmt.Sprintf("due_timers lists %v, not soonest first", due), nil
		}
		return "", err
	},
	"outbox-unordered": func(ctx context.Context, s model.Store) (string, error) {
		b := model.Batch{Emits: []model.Emit{{TargetID: model.Ptr("b"), Event: model.Event{Name: "first"}}, {TargetID: model.Ptr("a"), Event: model.Event{Name: "second"}}}}
		if err := s.Commit(ctx, &model.Execution{ID: "a"}, b); err != nil {
			return "", err
		}
		out, err := s.PendingOutbox(ctx)
		if err == nil && (len(out) != 2 || out[0].Event.Name != "first") {
			return "the pending outbox is not in seq order", nil
		}
		return "", err
	},
	"execution-id-nocase": func(ctx context.Context, s model.Store) (string, error) {
		if err := s.Save(ctx, &model.Execution{ID: "e1"}); err != nil {
			return "", err
		}
		err := s.Save(ctx, &model.Execution{ID: "E1"})
		if _, ok := model.AsConflict(err); ok {
			return fmt.Sprintf("creating E1 beside e1: %v", err), nil
		}
		return "", err
	},
	"timer-path-nocase": func(ctx context.Context, s model.Store) (string, error) {
		b := model.Batch{Timers: []model.TimerOp{{Action: model.TimerSchedule, Path: "t", FireAt: 1}, {Action: model.TimerSchedule, Path: "T", FireAt: 2}}}
		if err := s.Commit(ctx, &model.Execution{ID: "a"}, b); err != nil {
			return "", err
		}
		due, err := s.DueTimers(ctx, math.Inf(1))
		if err == nil && len(due) != 2 {
			return fmt.Sprintf("timers t and T scheduled, due_timers lists %v", due), nil
		}
		return "", err
	},
	"page-skip":        pagesListAll("a", "b", "c"),
	"page-prefix-skip": pagesListAll("e1", "e10", "e2"), // e10 extends e1
	"version-not-restored": func(ctx context.Context, s model.Store) (string, error) {
		if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
			return "", err
		}
		stale := &model.Execution{ID: "a"}
		if _, ok := model.AsConflict(s.Save(ctx, stale)); !ok || stale.Version != 0 {
			return fmt.Sprintf("after the conflict the caller's version is %d, want 0", stale.Version), nil
		}
		return "", nil
	},
	"stale-read": func(ctx context.Context, s model.Store) (string, error) {
		if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
			return "", err
		}
		if exe, err := s.Load(ctx, "a"); err != nil || exe == nil {
			return "a load right after a save does not see it", err
		}
		if exe, _, err := s.LoadForEvent(ctx, "a", "ev"); err != nil || exe == nil {
			return "a load_for_event right after a save does not see it", err
		}
		return "", nil
	},
}

func pendingOutbox(ctx context.Context, s model.Store, bug string) (string, error) {
	out, err := s.PendingOutbox(ctx)
	if err != nil || len(out) == 0 {
		return "", err
	}
	return bug, nil
}

// appendTraces appends n steps with the trace cap set to limit and reads
// the ring back.
func appendTraces(ctx context.Context, s model.Store, limit, n int) ([]model.TraceEntry, error) {
	s.(model.TraceMaxSetter).SetTraceMax(limit)
	for i := range n {
		if err := s.AppendTrace(ctx, "a", []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			return nil, err
		}
	}
	return s.ReadTrace(ctx, "a")
}

func indices(entries []model.TraceEntry) []int64 {
	var out []int64
	for _, e := range entries {
		out = append(out, e.Index)
	}
	return out
}

// TestDemos runs every demo against its mutant, which must show the bug, and
// against stores without that bug — the reference model, SQLite and the
// seed's guarded protocol (guarded-upsert, whose one bug no demo draws) —
// which must not: the demo shows a broken contract, not a quirk of the test.
func TestDemos(t *testing.T) {
	ctx := context.Background()
	for name, d := range demos {
		t.Run(name, func(t *testing.T) {
			for _, url := range []string{"mutant:" + name, "memory:", "sqlite:" + t.TempDir() + "/s.db", "mutant:guarded-upsert"} {
				s, err := backends.Open(ctx, url, model.DefaultConfig())
				if err != nil {
					t.Fatal(err)
				}
				bug, err := d(ctx, s)
				s.Close()
				switch {
				case err != nil:
					t.Errorf("%s: %v", url, err)
				case url == "mutant:"+name && bug == "":
					t.Errorf("%s: the bug did not show", url)
				case url != "mutant:"+name && bug != "":
					t.Errorf("%s (without this bug): %s", url, bug)
				}
			}
		})
	}
}

// The mutants whose bugs need concurrency pass the whole sequential
// conformance suite.
func TestSequentialSuite(t *testing.T) {
	for _, name := range []string{"read-check-write", "split-commit", "split-visible", "seq-sharded", "seq-before-tx"} {
		t.Run(name, func(t *testing.T) {
			conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
				return backends.Open(ctx, "mutant:"+name, cfg)
			})
		})
	}
}

// pagesListAll is the demonstration of a paging bug: ids saved, then
// listed one per page, must come back all, in order.
func pagesListAll(ids ...string) func(ctx context.Context, s model.Store) (string, error) {
	return func(ctx context.Context, s model.Store) (string, error) {
		for _, id := range ids {
			if err := s.Save(ctx, &model.Execution{ID: id}); err != nil {
				return "", err
			}
		}
		var listed []string
		f := model.ListFilter{Limit: 1}
		for range len(ids) + 2 {
			page, err := s.ListExecutions(ctx, f)
			if err != nil {
				return "", err
			}
			for _, it := range page.Items {
				listed = append(listed, it.ID)
			}
			if f.Cursor = page.Next; f.Cursor == "" {
				break
			}
		}
		if !slices.Equal(listed, ids) {
			return fmt.Sprintf("paging by 1 listed %v", listed), nil
		}
		return "", nil
	}
}
