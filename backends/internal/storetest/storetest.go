// Package storetest holds the checks and benchmarks every embedded backend's
// tests run: concurrent commits from one version, a scripted comparison with
// model.Reference, and timestamp-looking text.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// Full is what the checks need of a store.
type Full interface {
	model.Store
	model.Dumper
	model.Resetter
	model.TraceMaxSetter
}

// Fresh resets s, sets its trace cap, and returns a context for the test.
func Fresh(t testing.TB, s Full, traceMax int) context.Context {
	t.Helper()
	ctx := context.Background()
	if err := s.Reset(ctx); err != nil {
		t.Fatalf("reset: %v", err)
	}
	s.SetTraceMax(traceMax)
	return ctx
}

// ConcurrentCommits checks that, of writers goroutines committing one
// execution from the same version, exactly one wins and every other gets a
// *model.StoreConflict (not a "database is locked" or any other error), and
// that only the winner's side-writes exist. It runs several rounds.
func ConcurrentCommits(t *testing.T, s Full, writers int) {
	ctx := Fresh(t, s, model.DefaultTraceMax)
	const rounds = 10
	exe := &model.Execution{ID: "race", DefinitionID: "def", Status: "running", ActivePath: "start"}
	if err := s.Save(ctx, exe); err != nil {
		t.Fatalf("save: %v", err)
	}
	for round := range rounds {
		winner := commitRace(t, s, exe, writers, round)
		if winner < 0 {
			return
		}
		got, err := s.Load(ctx, exe.ID)
		if err != nil || got == nil {
			t.Fatalf("round %d: load: %v, %v", round, got, err)
		}
		if want := fmt.Sprintf("w%d.%d", round, winner); got.ActivePath != want || got.Version != exe.Version+1 {
			t.Fatalf("round %d: stored %s at version %d, want %s at %d", round, got.ActivePath, got.Version, want, exe.Version+1)
		}
		exe = got
	}
	out, err := s.PendingOutbox(ctx)
	if err != nil {
		t.Fatalf("pending outbox: %v", err)
	}
	if len(out) != rounds {
		t.Fatalf("outbox holds %d emits after %d rounds, want one per round (a loser leaked): %+v", len(out), rounds, out)
	}
}

// commitRace starts writers commits of exe at once and returns the winner's
// number, or -1 after reporting a failure.
func commitRace(t *testing.T, s Full, exe *model.Execution, writers, round int) int {
	ctx := context.Background()
	start := make(chan struct{})
	errs := make([]error, writers)
	versions := make([]int64, writers)
	var wg sync.WaitGroup
	for i := range writers {
		e := exe.Clone()
		e.ActivePath = fmt.Sprintf("w%d.%d", round, i)
		b := model.Batch{
			Emits:            []model.Emit{{Event: model.Event{ID: e.ActivePath, Name: "won"}}},
			ProcessedEventID: model.Ptr(e.ActivePath),
		}
		wg.Go(func() {
			<-start
			errs[i] = s.Commit(ctx, e, b)
			versions[i] = e.Version
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		c, isConflict := model.AsConflict(err)
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("round %d: writers %d and %d both won from version %d", round, winner, i, exe.Version)
			}
			winner = i
			if versions[i] != exe.Version+1 {
				t.Errorf("round %d: winner's version is %d, want %d", round, versions[i], exe.Version+1)
			}
		case isConflict:
			if c.Expected != exe.Version || c.Found == nil || *c.Found != exe.Version+1 {
				t.Errorf("round %d: writer %d: conflict %v, want expected %d found %d", round, i, c, exe.Version, exe.Version+1)
			}
			if versions[i] != exe.Version {
				t.Errorf("round %d: loser %d's version moved to %d", round, i, versions[i])
			}
		default:
			t.Errorf("round %d: writer %d: %v (want success or a StoreConflict)", round, i, err)
		}
	}
	if winner < 0 && !t.Failed() {
		t.Errorf("round %d: no writer won", round)
	}
	if t.Failed() {
		return -1
	}
	return winner
}

// sameError reports whether two operation errors agree: both nil, both the
// same conflict, or both some other error.
func sameError(want, got error) bool {
	wc, wok := model.AsConflict(want)
	gc, gok := model.AsConflict(got)
	if wok || gok {
		return wok && gok && reflect.DeepEqual(wc, gc)
	}
	return (want == nil) == (got == nil) && errors.Is(got, model.ErrInvalidArgument) == errors.Is(want, model.ErrInvalidArgument)
}
