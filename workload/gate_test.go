package workload

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// TestGateHoldsTheTraffic: while the gate is closed no client takes a step
// (a step in flight ends, none begins); opened, the traffic goes on.
func TestGateHoldsTheTraffic(t *testing.T) {
	gate := &Gate{}
	var steps atomic.Int64
	var during, after int64
	// The run is long enough that the gate opens well before its end on a
	// loaded machine; the steps in flight when it closes are waited out
	// (no step for 200 ms), not guessed.
	cfg := Config{Clients: 3, Duration: 2 * time.Second, Seed: 5, Gate: gate, Progress: &steps,
		During: func(ctx context.Context, _ func() int64) error {
			time.Sleep(100 * time.Millisecond)
			gate.Close()
			held := settled(ctx, &steps, 200*time.Millisecond)
			time.Sleep(200 * time.Millisecond)
			during = steps.Load() - held
			gate.Open()
			for after == 0 && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
				after = steps.Load() - held - during
			}
			gate.Close() // the rest of the run idles: a short history to check
			<-ctx.Done()
			return nil
		}}
	res, err := Run(context.Background(), model.NewReference(model.DefaultConfig()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Ok {
		t.Fatalf("verdict %s", res.Verdict)
	}
	if during != 0 || after == 0 {
		t.Fatalf("%d steps while the gate was closed (want 0), %d after it opened (want some)", during, after)
	}

	// A closed gate lets a client go when the run's context ends.
	gate.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	gate.Wait(ctx)
	if time.Since(start) > 2*time.Second {
		t.Fatal("Wait did not return when its context ended")
	}
	gate.Open()
	gate.Open() // opening an open gate does nothing
	gate.Wait(context.Background())
}

// settled waits until steps has not moved for quiet (or ctx ends) and
// returns its value.
func settled(ctx context.Context, steps *atomic.Int64, quiet time.Duration) int64 {
	last, since := steps.Load(), time.Now()
	for ctx.Err() == nil && time.Since(since) < quiet {
		time.Sleep(10 * time.Millisecond)
		if n := steps.Load(); n != last {
			last, since = n, time.Now()
		}
	}
	return last
}

// TestGateHoldsNoLongerThanTheDuration: a gate left closed past the run's
// duration does not keep its clients: the traffic ends at the deadline.
func TestGateHoldsNoLongerThanTheDuration(t *testing.T) {
	gate := &Gate{}
	gate.Close()
	defer gate.Open()
	start := time.Now()
	cfg := Config{Clients: 2, Duration: 300 * time.Millisecond, Seed: 6, Gate: gate}
	if _, err := Run(context.Background(), model.NewReference(model.DefaultConfig()), cfg); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a run of 300 ms with its gate closed took %v", took)
	}
}
