package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/model"
)

// TestCheckStopsMidCaseOnInterrupt: an interrupt ends the check within the
// test case it comes in, not after it: a case of --steps 10000000 ran on
// for minutes after Ctrl-C (and SIGTERM), its memory growing.
func TestCheckStopsMidCaseOnInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	open := func(_ context.Context, cfg model.Config) (model.Store, error) { return model.NewReference(cfg), nil }
	done := make(chan error, 1)
	go func() {
		_, err := conformance.Check(ctx, open, conformance.CheckConfig{Seed: 1, Checks: 1, Steps: 10_000_000})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("an interrupted check returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the check ran on 10 s after the interrupt")
	}
}
