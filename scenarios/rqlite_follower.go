package scenarios

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/managed"
	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload"
)

// followerReadScenario shows the read-level hazard: every read is served
// by one follower, at the level the backend URL asks for, while that
// follower is cut off from the others. At level none it answers from its
// own, frozen tables, and the checker must report the stale reads
// (Illegal, with the visualization): FAIL is the expected verdict, and the
// proof that the checker sees the hazard. At strong or linearizable it
// cannot answer without the leader, its reads fail, and the history must
// pass.
func followerReadScenario() Scenario {
	return Scenario{
		Name: "follower-read",
		Summary: "reads served by one follower at the URL's level (level=none|weak|linearizable|strong) while it is cut off " +
			"from the others: level=none must FAIL with stale reads caught, strong and linearizable must pass",
		Needs: clusterNeeds(),
		Run:   runFollowerRead,
	}
}

// readerStore is a store that can send its reads to one node.
type readerStore interface {
	clusterStore
	ReadingFrom(id string, level rqlite.Level) (*managed.SplitStore, error)
	Level() rqlite.Level
}

func runFollowerRead(ctx context.Context, t Target, p Params) Result {
	cs, fail := openCluster(ctx, t, p)
	if fail != nil {
		return *fail
	}
	defer cs.Close()
	rs, ok := cs.(readerStore)
	if !ok {
		return Result{Verdict: reports.NotRun, Reason: "the backend cannot send its reads to one node"}
	}
	cl := cs.Cluster()
	ctl := cluster.Control{Cluster: cl}
	follower, err := pickFollower(ctx, ctl, p.Seed)
	if err != nil {
		return *rqNotRun(ctx, "no follower to read from: %v", err)
	}
	sched := chaos.Schedule{Faults: []chaos.Fault{chaos.Isolate{Node: follower}}, Interval: time.Second, Duration: 8 * time.Second, Max: 2, Seed: p.Seed}
	if err := sched.Available(ctl); err != nil {
		return *rqNotRun(ctx, "on this %s cluster: %v", cl.Kind(), err)
	}
	split, err := rs.ReadingFrom(follower, rs.Level())
	if err != nil {
		return *rqNotRun(ctx, "%v", err)
	}
	defer split.Close()
	tl, err := folder(p).Timeline()
	if err != nil {
		return *rqNotRun(ctx, "%v", err)
	}
	var faultErr error
	during := func(ctx context.Context, now func() int64) error {
		faultErr = sched.Run(ctx, ctl, now, tl, progressHooks(p))
		// The heal reads go to the follower too: let it catch up first.
		_, err := cluster.WaitApplied(context.WithoutCancel(ctx), cl, appliedWait)
		return err
	}
	wcfg := faultWorkload(t, p, "follower-read", during)
	// No standalone trace appends: while the follower is cut off at a
	// strong level nearly every read fails, and hundreds of appends that no
	// read orders make the trace ring's linearization search explode. The
	// hazard is in the register reads; commits still append trace steps.
	wcfg.Mix = workload.DefaultMix()
	wcfg.Mix.AppendTrace = 0
	if p.Duration == 0 {
		wcfg.Duration = 20 * time.Second
	}
	res, err := workload.Run(ctx, split, wcfg)
	defer saveServerLogs(p, cl)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return Result{Verdict: reports.Interrupted, Reason: "interrupted during the workload; faults healed and the cluster removed"}
		}
		return *rqNotRun(ctx, "workload could not run: %v (faults: %v)", err, faultErr)
	}
	out := historyResult(res)
	notRecovered(&out, res)
	events := tl.Faults()
	faultMetrics(out.Metrics, res, events)
	if out.Verdict == reports.Pass {
		if after := checkAfterHeal(ctx, cs, res.History); after.err != nil {
			out.Verdict, out.Guarantee, out.Reason = reports.Fail, after.guarantee, rqOneLine(after.err.Error())
		}
	}
	if out.Verdict == reports.Fail && out.Guarantee == linearizability.ErrLinearizability.Error() {
		// Name the level, the node and what was in place when the read
		// went back: at level none a follower lags even with no fault.
		where := "reads at level " + string(rs.Level()) + " from " + follower
		if c := faultContext(firstViolationAt(res), events); c != "" {
			where += ", " + c
		}
		out.Reason = where + ": " + out.Reason
	}
	if res.Verdict == linearizability.Illegal {
		visualizeFaults(ctx, p, res, events)
	}
	return out
}

// pickFollower picks, from the seed, a node that does not lead.
func pickFollower(ctx context.Context, ctl cluster.Control, seed uint64) (string, error) {
	leader, err := ctl.Leader(ctx)
	if err != nil {
		return "", err
	}
	var followers []string
	for _, id := range ctl.NodeIDs() {
		if id != leader {
			followers = append(followers, id)
		}
	}
	if len(followers) == 0 {
		return "", chaos.ErrNoFollower
	}
	return followers[rand.New(rand.NewPCG(seed, 0xf011)).IntN(len(followers))], nil
}
