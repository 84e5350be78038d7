package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/backends/rqlite/managed"
	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
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

// readerStore is a store that can send its reads to chosen nodes.
type readerStore interface {
	clusterStore
	RoutedReads(level rqlite.Level) (*managed.SplitStore, error)
	Level() rqlite.Level
}

// readHazard is what a read-level scenario sets up on its cluster: where
// its reads go, the faults that open the window, and how its reads are
// described in a verdict.
type readHazard struct {
	sched chaos.Schedule
	// where names the reads ("reads at level none from n2").
	where string
	// duration is the traffic's length when --duration is not given.
	duration time.Duration
	// store, when set, takes the traffic instead of the split store (and
	// is closed with it): leader-pause sends every call through one node.
	store model.Store
	// after, when set, runs once the traffic has ended, while the nodes
	// still run: it may keep evidence and add to the result.
	after func(ctx context.Context, out *Result)
}

func runFollowerRead(ctx context.Context, t Target, p Params) Result {
	return runReadHazard(ctx, t, p, "follower-read", func(ctx context.Context, ctl cluster.Control, level rqlite.Level, reads *managed.SplitStore) (readHazard, error) {
		follower, err := pickFollower(ctx, ctl, p.Seed)
		if err != nil {
			return readHazard{}, fmt.Errorf("no follower to read from: %w", err)
		}
		if err := reads.Route(follower); err != nil {
			return readHazard{}, err
		}
		return readHazard{
			sched:    chaos.Schedule{Faults: []chaos.Fault{chaos.Isolate{Node: follower}}, Interval: time.Second, Duration: 8 * time.Second, Max: 2, Seed: p.Seed},
			where:    "reads at level " + string(level) + " from " + follower,
			duration: 20 * time.Second,
		}, nil
	})
}

// leaderStallScenario opens the paused-leader window: the leader is frozen
// past an election, the new leader takes writes, and as the old one is
// thawed every read is sent to it, at the URL's level. At level weak it
// may answer from its own state while it still believes it leads, and the
// checker reports any stale read it serves (the builds measured stepped
// down first: docs/DETECTION.md); at linearizable and strong it must
// confirm its leadership first, and the history must pass.
func leaderStallScenario() Scenario {
	return Scenario{
		Name: "leader-stall",
		Summary: "the leader is frozen (SIGSTOP) past an election while the new leader takes writes, then thawed with every read sent to it " +
			"at the URL's level: at none and weak the thawed leader may serve stale reads, and any it serves FAIL the run; linearizable and strong must pass (weak passed on rqlited v10.2.7+ and v8.43.4: docs/DETECTION.md)",
		Needs: clusterNeeds(),
		Run:   runLeaderStall,
	}
}

// leaderStallHold is how long the frozen leader stays frozen once another
// node leads. The clients' calls that were waiting on it when it froze end
// only at faultOpTimeout (they are indeterminate: sent, unanswered); then
// they move on to the new leader, which must acknowledge writes before the
// thaw for a stale read to be possible: 2 s of them, hundreds of commits
// on loopback.
const leaderStallHold = faultOpTimeout + 2*time.Second

// leaderStallDuration is the scenario's default traffic: four stalls
// (interval, election, hold, gather, heal: about 12 s each). Each stall is
// one race at the thaw, which a weak read wins about half the time
// (docs/DETECTION.md), so the number of stalls sets the catch rate.
const leaderStallDuration = 48 * time.Second

// leaderStallGather is how long reads are sent to the frozen leader before
// it is thawed: they wait in its sockets and are the first thing it serves
// on waking. Each client's next read lands there within a few steps (a
// step takes milliseconds), and a read waiting 300 ms stays well inside
// the fault workload's 5 s call timeout.
const leaderStallGather = 300 * time.Millisecond

func runLeaderStall(ctx context.Context, t Target, p Params) Result {
	return runReadHazard(ctx, t, p, "leader-stall", func(ctx context.Context, ctl cluster.Control, level rqlite.Level, reads *managed.SplitStore) (readHazard, error) {
		leader, err := ctl.Leader(ctx)
		if err != nil {
			return readHazard{}, fmt.Errorf("no leader: %w", err)
		}
		if err := reads.Route(leader); err != nil {
			return readHazard{}, err
		}
		// While the leader is frozen the reads go to the new one, so the
		// clients keep reading and writing; at the gather they go to the
		// frozen node, each sent after the client's writes to the new
		// leader were acknowledged.
		stall := chaos.StallLeader{
			OnFrozen: func(_, next string) { _ = reads.Route(next) },
			OnResume: func(id string) { _ = reads.Route(id) },
			Gather:   leaderStallGather,
		}
		return readHazard{
			sched:    chaos.Schedule{Faults: []chaos.Fault{stall}, Interval: 2 * time.Second, Duration: leaderStallHold, Jitter: 0.2, Seed: p.Seed},
			where:    "reads at level " + string(level) + " from the last leader frozen",
			duration: leaderStallDuration,
		}, nil
	})
}

// leaderPauseScenario opens the window of a forwarded request given up on:
// every call goes through one follower, which forwards it to the leader
// with rqlite's timeout= of leaderPauseTimeout, while the leader is frozen
// for leaderPauseHold at a time, shorter than its lease, so that it wakes
// still leading. The follower gives up on the calls it forwarded in the
// meantime, and the leader applies them when it wakes: the follower must
// answer such a call as failed with its outcome unknown, and never send it
// again. rqlite 8.16 and 8.17 sent it again, up to eight times
// (rqlite#1628), and rqlite 10 once, on a new connection (the known issue
// rqlite-forwarded-write-resent): a write applied twice, whose later copy
// loses the CAS the first won, so the client is told of a conflict for a
// write that was applied, which the checker reports.
func leaderPauseScenario() Scenario {
	return Scenario{
		Name: "leader-pause",
		Summary: "every call goes through one follower, which forwards it to the leader with rqlite's timeout=" + leaderPauseTimeout.String() +
			", while the leader is frozen (SIGSTOP, docker pause) for " + leaderPauseHold.String() + " at a time, within its lease: the calls the follower gives up on " +
			"are applied when the leader wakes, and must be reported failed with their outcome unknown, never sent again (rqlite#1628: 8.16–8.17 applied them twice; rqlite 10 does too, docs/KNOWN-ISSUES.md#rqlite-forwarded-write-resent)",
		Needs: clusterNeeds(),
		Run:   runLeaderPause,
	}
}

// leaderPauseHold is how long the leader is frozen each time: shorter than
// rqlite's default leader lease (500 ms; a pause of 640 ms made it step
// down), so no election follows, and three of the follower's timeouts long.
const leaderPauseHold = 300 * time.Millisecond

// leaderPauseTimeout is the timeout= the follower is given for each call.
const leaderPauseTimeout = 100 * time.Millisecond

func runLeaderPause(ctx context.Context, t Target, p Params) Result {
	return runReadHazard(ctx, t, p, "leader-pause", func(ctx context.Context, ctl cluster.Control, _ rqlite.Level, split *managed.SplitStore) (readHazard, error) {
		follower, err := pickFollower(ctx, ctl, p.Seed)
		if err != nil {
			return readHazard{}, fmt.Errorf("no follower to send the calls through: %w", err)
		}
		through, err := split.Writer.ForwardingView(follower, leaderPauseTimeout)
		if err != nil {
			return readHazard{}, err
		}
		return readHazard{
			sched:    chaos.Schedule{Faults: []chaos.Fault{chaos.PauseLeader}, Interval: time.Second, Duration: leaderPauseHold, Jitter: 0.2, Seed: p.Seed},
			where:    "calls through follower " + follower + " (timeout=" + leaderPauseTimeout.String() + ")",
			duration: DefaultFaultDuration,
			store:    through,
			after:    func(ctx context.Context, out *Result) { keepForwardStats(ctx, p, ctl, follower, out) },
		}, nil
	})
}

// forwardEvidence is the file of a leader-pause run that says what the
// node the calls went through did with the requests it forwarded; a line
// starting with cluster.ResentSignature is written only when it sent a
// write again.
const forwardEvidence = "forwarding.txt"

// keepForwardStats reads what node id says of the writes it forwarded,
// keeps it as forwardEvidence, adds it to out's metrics, and, on a FAIL,
// to its reason: a write sent twice explains a conflict reported for a
// write that was applied.
func keepForwardStats(ctx context.Context, p Params, ctl cluster.Control, id string, out *Result) {
	st, err := ctl.ForwardStats(ctx, id)
	if err != nil {
		keep(p, forwardEvidence, []byte(fmt.Sprintf("%s: counters not read: %v\n", id, err)))
		return
	}
	newConns := "no such counter (rqlite 8: a failed attempt of a write not given up on was followed by another)"
	if st.NewConnections >= 0 {
		newConns = fmt.Sprintf("%d (num_client_force_new_conn: writes and reads)", st.NewConnections)
	}
	lines := []string{
		fmt.Sprintf("node %s took every call, with rqlite's timeout=%s, and forwarded the writes to the leader (its /debug/vars at the end of the traffic)", id, leaderPauseTimeout),
		fmt.Sprintf("forwarded writes answered: %d (remote_executions); given up on: %d (remote_executions_failed)", st.Forwarded, st.GivenUp),
		fmt.Sprintf("failed attempts of forwarded writes: %d (num_client_execute_retries); of reads: %d (num_client_query_retries, num_client_request_retries, num_client_load_retries)", st.FailedAttempts, st.ReadFailedAttempts),
		"requests sent once more on a new connection: " + newConns,
	}
	resent := st.Resent()
	if resent > 0 {
		lines = append(lines, fmt.Sprintf("%s%d: each may be applied twice", cluster.ResentSignature, resent))
	} else {
		lines = append(lines, "no forwarded write was sent again")
	}
	keepLines(p, forwardEvidence, lines)
	if out.Metrics == nil {
		out.Metrics = map[string]float64{}
	}
	out.Metrics["forwarded_writes"] = float64(st.Forwarded)
	out.Metrics["forwarded_given_up"] = float64(st.GivenUp)
	out.Metrics["forwarded_resent"] = float64(resent)
	if out.Verdict == reports.Fail && resent > 0 {
		out.Reason += fmt.Sprintf("; %s sent %d forwarded writes to the leader again after a failed attempt (%s)", id, resent, forwardEvidence)
	}
}

// runReadHazard runs a read-level scenario: the concurrent workload with
// every read at the URL's level from the node setup routes it to, while
// setup's schedule breaks the cluster; then the checks after the heal.
func runReadHazard(ctx context.Context, t Target, p Params, name string,
	setup func(context.Context, cluster.Control, rqlite.Level, *managed.SplitStore) (readHazard, error)) Result {
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
	split, err := rs.RoutedReads(rs.Level())
	if err != nil {
		return *rqNotRun(ctx, "%v", err)
	}
	defer split.Close()
	hz, err := setup(ctx, ctl, rs.Level(), split)
	if err != nil {
		return *rqNotRun(ctx, "%v", err)
	}
	var traffic model.Store = split
	if hz.store != nil {
		traffic = hz.store
		defer hz.store.Close()
	}
	if err := hz.sched.Available(ctl); err != nil {
		return *rqNotRun(ctx, "on this %s cluster: %v", cl.Kind(), err)
	}
	tl, err := folder(p).Timeline()
	if err != nil {
		return *rqNotRun(ctx, "%v", err)
	}
	var faultErr error
	during := func(ctx context.Context, now func() int64) error {
		faultErr = hz.sched.Run(ctx, ctl, now, tl, progressHooks(p))
		// The heal reads go to the same node: let it catch up first, to
		// the file and not only to the applied index (see appliedWait).
		ctx = context.WithoutCancel(ctx)
		if _, err := cluster.WaitApplied(ctx, cl, appliedWait); err != nil {
			return err
		}
		_, err := cluster.Barrier(ctx, cl, appliedWait)
		return err
	}
	wcfg := faultWorkload(t, p, name, during)
	// No standalone trace appends: while the node read from cannot answer
	// at a strong level nearly every read fails, and hundreds of appends
	// that no read orders make the trace ring's linearization search
	// explode. The hazard is in the register reads; commits still append
	// trace steps.
	wcfg.Mix = workload.DefaultMix()
	wcfg.Mix.AppendTrace = 0
	if p.Duration == 0 {
		wcfg.Duration = hz.duration
	}
	res, err := workload.Run(ctx, traffic, wcfg)
	defer saveServerLogs(p, cl)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return Result{Verdict: reports.Interrupted, Reason: "interrupted during the workload; faults healed and the cluster removed"}
		}
		return *rqNotRun(ctx, "workload could not run: %v (faults: %v)", err, faultErr)
	}
	out := historyResult(res)
	notRecovered(&out, res)
	if hz.after != nil {
		hz.after(ctx, &out)
	}
	events := tl.Faults()
	faultMetrics(out.Metrics, res, events)
	// The checks after the heal run whatever the history's verdict: a
	// node that lost acknowledged writes explains a heal read that did not
	// see them (a lost update in the history); then the nodes are stopped
	// and their Raft logs compared (inspectNodes).
	after := checkAfterHeal(ctx, cs, res.History)
	after.apply(&out)
	inspected := inspectNodes(ctx, p, cl, after, out.Verdict == reports.Fail, nodeReader(cs))
	if out.Verdict == reports.Fail && out.Guarantee == linearizability.ErrLinearizability.Error() {
		// Name the level, the node and what was in place when the read
		// went back: at level none a follower lags even with no fault.
		where := hz.where
		if c := faultContext(firstViolationAt(res), events); c != "" {
			where += ", " + c
		}
		out.Reason = where + ": " + out.Reason
	}
	inspected.apply(&out)
	noFaultTookEffect(&out, events)
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
