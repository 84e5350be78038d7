package workload

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// TestDuringRunsAlongsideTheTraffic: the hook starts with the traffic, its
// clock is the history's, its context ends when the traffic stops, and Run
// waits for it before the heal reads.
func TestDuringRunsAlongsideTheTraffic(t *testing.T) {
	var first, last int64
	var ended time.Time
	cfg := Config{Clients: 3, Duration: 300 * time.Millisecond, Seed: 5,
		During: func(ctx context.Context, now func() int64) error {
			first = now()
			<-ctx.Done()
			time.Sleep(50 * time.Millisecond) // "healing"
			last, ended = now(), time.Now()
			return nil
		}}
	res, err := Run(context.Background(), model.NewReference(model.DefaultConfig()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Ok || last <= first {
		t.Fatalf("verdict %s, hook clock %d..%d", res.Verdict, first, last)
	}
	var lastTraffic, firstHeal int64 = 0, -1
	for _, op := range res.History.Ops {
		if op.Heal {
			if firstHeal < 0 || op.Call < firstHeal {
				firstHeal = op.Call
			}
		} else if op.Return != linearizability.EndOfHistory {
			lastTraffic = max(lastTraffic, op.Return)
		}
	}
	if first > lastTraffic || last > firstHeal || ended.IsZero() {
		t.Errorf("hook from %d to %d; traffic ended %d, heal began %d", first, last, lastTraffic, firstHeal)
	}

	boom := errors.New("boom")
	cfg.During = func(context.Context, func() int64) error { return boom }
	if _, err := Run(context.Background(), model.NewReference(model.DefaultConfig()), cfg); !errors.Is(err, boom) {
		t.Errorf("the hook's error was not returned: %v", err)
	}
}
