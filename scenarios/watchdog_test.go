package scenarios

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// watchdogGrace is how long past its deadline a run may take to return.
const watchdogGrace = 30 * time.Second

// runWatched runs run with a context that ends after limit, and fails the
// test with the stacks of every goroutine when run has not returned
// watchdogGrace after that: a test against a real server must end in a
// verdict and say where it waited, not in the package's -timeout with
// nothing said.
func runWatched(t *testing.T, limit time.Duration, run func(ctx context.Context) Result) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- run(ctx) }()
	timer := time.NewTimer(limit + watchdogGrace)
	defer timer.Stop()
	select {
	case res := <-done:
		return res
	case <-timer.C:
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("the run had not returned %v after its %v deadline: something it waits on ignores the context; goroutines:\n%s",
			watchdogGrace, limit, stacks.String())
		return Result{}
	}
}

func TestRunWatchedReturnsTheResult(t *testing.T) {
	res := runWatched(t, time.Minute, func(ctx context.Context) Result {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the run was given no deadline")
		}
		return Result{Reason: "done"}
	})
	if res.Reason != "done" {
		t.Errorf("result %+v", res)
	}
}
