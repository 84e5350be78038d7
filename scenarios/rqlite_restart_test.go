package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/workload"
)

// TestRestartUnderLoadThenCheckAtOnce reproduces the restart-then-check
// race: a follower killed under load is started again the moment the
// traffic ends, and the post-heal checks run at once. rqlite reports the
// whole log applied before the restarted node's SQLite file holds it, so a
// check that waited for the applied index alone read old rows from that
// node and reported a durability loss on a correct cluster. The checks now
// wait for a barrier each node's own file shows; they must pass.
//
// Odd rounds run the checks at once; even rounds first measure what the
// old wait would have seen: the restarted node's rows read right after
// WaitApplied alone. That is logged, not asserted (the window is a matter
// of timing), to show the race is real on this machine. The checks must
// pass in every round.
func TestRestartUnderLoadThenCheckAtOnce(t *testing.T) {
	bin := needRqlited(t)
	ctx := context.Background()
	const rounds = 4
	oldWaitLagged := 0
	for round := 1; round <= rounds; round++ {
		// A fresh cluster each round: the workload starts from empty tables.
		s, err := backends.Open(ctx, "rqlite+process:?nodes=3&rqlited="+bin, model.DefaultConfig())
		if err != nil {
			t.Skipf("NOT RUN: the cluster could not start: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		cs := s.(clusterStore)
		cl := cs.Cluster()
		leader, err := cluster.Leader(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		victim := ""
		for _, n := range cl.Nodes() {
			if n.ID != leader.ID {
				victim = n.ID
				break
			}
		}
		cfg := workload.Config{Clients: 12, Executions: 3, Seed: uint64(round), Duration: 15 * time.Second,
			During: func(ctx context.Context, _ func() int64) error {
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
				if err := cl.Kill(context.WithoutCancel(ctx), victim); err != nil {
					return err
				}
				<-ctx.Done() // the traffic has ended: restart now, and check at once
				return cl.Start(context.WithoutCancel(ctx), victim)
			}}
		res, err := workload.Run(ctx, s, cfg)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		acked := ackedVersions(res.History)

		if round%2 == 0 {
			// Even rounds measure what the check before the fix waited for,
			// the applied index alone, reading the restarted node at once.
			if _, err := cluster.WaitApplied(ctx, cl, appliedWait); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if d, err := dumpNode(ctx, cs, victim); err != nil {
				t.Logf("round %d: %s not readable right after WaitApplied: %v", round, victim, err)
			} else if err := durable(d, acked); err != nil {
				oldWaitLagged++
				t.Logf("round %d: with the applied index alone the check would have false-alarmed: %s: %v", round, victim, err)
			}
		}
		after := checkAfterHeal(ctx, cs, res.History)
		if after.err != nil || after.harness != nil {
			t.Fatalf("round %d: false alarm on a correct cluster after restarting %s: %v %v", round, victim, after.err, after.harness)
		}
		t.Logf("round %d: restarted %s, %d acknowledged executions, checks passed after a %v barrier wait", round, victim, len(acked), after.settled)
		if err := s.Close(); err != nil {
			t.Errorf("round %d: close the cluster: %v", round, err)
		}
	}
	t.Logf("the applied-index-only wait read stale rows in %d of %d rounds that measured it", oldWaitLagged, rounds/2)
}
