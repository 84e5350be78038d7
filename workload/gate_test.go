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
	cfg := Config{Clients: 3, Duration: 600 * time.Millisecond, Seed: 5, Gate: gate, Progress: &steps,
		During: func(ctx context.Context, _ func() int64) error {
			time.Sleep(100 * time.Millisecond)
			gate.Close()
			time.Sleep(20 * time.Millisecond) // the steps in flight end
			held := steps.Load()
			time.Sleep(200 * time.Millisecond)
			during = steps.Load() - held
			gate.Open()
			time.Sleep(100 * time.Millisecond)
			after = steps.Load() - held - during
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
