package scenarios

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/rqlite"
	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
	"github.com/storecheck/storecheck/workload"
)

// The rqlite fault scenarios run the concurrent workload on a cluster the
// run starts (rqlite+process: or rqlite+container:) while a chaos schedule
// breaks it, then heal, and check: porcupine and the global checks on the
// history, every acknowledged commit on every node (durability), and every
// node's six tables identical at the same applied index (convergence).

// rqliteScenarios lists them.
func rqliteScenarios() []Scenario {
	return []Scenario{
		faultScenario("leader-kill", "the leader is SIGKILLed (docker kill) and restarted, again and again, under the concurrent workload",
			func(cluster.Cluster, *workload.Config) chaos.Schedule {
				return chaos.Schedule{Faults: []chaos.Fault{chaos.KillLeader}, Interval: 3 * time.Second, Duration: 4 * time.Second, Jitter: 0.3}
			}),
		faultScenario("follower-stall", "a follower is frozen (SIGSTOP, docker pause) and thawed, again and again, under the concurrent workload",
			func(cluster.Cluster, *workload.Config) chaos.Schedule {
				return chaos.Schedule{Faults: []chaos.Fault{chaos.StallFollower}, Interval: 2 * time.Second, Duration: 5 * time.Second, Jitter: 0.3}
			}),
		faultScenario("partition-leader", "the leader is cut off from the majority (iptables DROP on loopback, docker network disconnect) and rejoined, under the concurrent workload",
			func(cluster.Cluster, *workload.Config) chaos.Schedule {
				return chaos.Schedule{Faults: []chaos.Fault{chaos.IsolateLeader}, Interval: 3 * time.Second, Duration: 6 * time.Second, Jitter: 0.3}
			}),
		faultScenario("rolling-restart", "every node in turn is stopped gracefully and started again, round and round, under the concurrent workload",
			func(c cluster.Cluster, _ *workload.Config) chaos.Schedule {
				var faults []chaos.Fault
				for _, n := range c.Nodes() {
					faults = append(faults, chaos.Restart{Node: n.ID})
				}
				return chaos.Schedule{Faults: faults, InOrder: true, Interval: 2 * time.Second, Duration: 2 * time.Second, Jitter: 0.2}
			}),
		faultScenario("mixed-faults", "one seeded schedule of mixed faults — a follower or the leader SIGKILLed (docker kill) and restarted, a follower frozen, the leader asked to step down, "+
			"and, where the run can set iptables rules (a process cluster, as root), a node whose links to the others lose "+fmt.Sprintf("%.0f%%", mixedLoss*100)+" of their packets — under the concurrent workload",
			func(c cluster.Cluster, _ *workload.Config) chaos.Schedule {
				faults := []chaos.Fault{chaos.KillFollower, chaos.KillLeader, chaos.StallFollower, chaos.StepDown}
				if (cluster.Control{Cluster: c}).PacketLossAvailable() == nil {
					faults = append(faults, chaos.PacketLoss{Fraction: mixedLoss})
				}
				return chaos.Schedule{Faults: faults, Interval: 2 * time.Second, Duration: 3 * time.Second, Jitter: 0.3}
			}),
		faultScenario("kill-after-ack", "the leader is SIGKILLed within 5 ms of a write it acknowledged (docker kill), and restarted, again and again, under the concurrent workload: "+
			"the acknowledged write must survive, and the next leader must not answer before it holds it (Raft §8)",
			func(_ cluster.Cluster, w *workload.Config) chaos.Schedule {
				acks := make(chan struct{}, 1)
				w.OnAck = func() {
					select {
					case acks <- struct{}{}:
					default: // one waiting is enough; never block a client
					}
				}
				return chaos.Schedule{Faults: []chaos.Fault{chaos.KillAfterAck{Acks: acks, Delay: 5 * time.Millisecond}}, Interval: 3 * time.Second, Duration: 4 * time.Second, Jitter: 0.3}
			}),
		killDuringInstallScenario(),
		killDuringSnapshotScenario(),
		longReadsScenario(),
		followerReadScenario(),
		leaderStallScenario(),
		leaderPauseScenario(),
	}
}

// killDuringInstallScenario interrupts snapshot installs (chaos.KillDuringInstall).
// It needs the leader to snapshot often: on a process cluster whose URL
// sets no snapshot threshold, the scenario gives its servers a low one
// (snapshotFlags) and says so. A run in which no install was interrupted
// tested nothing of what it is for: it is NOT RUN, with what the URL needs,
// never PASS.
func killDuringInstallScenario() Scenario {
	const name = "kill-during-install"
	sc := faultScenario(name, "a follower is SIGKILLed, the leader snapshots past it, the traffic is held, the follower is restarted and SIGKILLed again "+
		"the moment its live log shows it installing the leader's snapshot, the leader steps down and the follower is restarted at once "+
		"(so that a new leader sends it entries, not a fresh snapshot, and what the interrupted install left stays), then the traffic goes on; "+
		"again and again, under the concurrent workload "+
		"(a process cluster; its servers get a low snapshot threshold, "+snapshotFlags+", unless the URL sets one)",
		func(cl cluster.Cluster, w *workload.Config) chaos.Schedule {
			gate := &workload.Gate{}
			w.Gate = gate
			hold := func() func() { gate.Close(); return gate.Open }
			// What each interrupted install left on the follower's disk
			// is kept (installs/): the snapshot store a fast restart
			// then reaps over (docs/KNOWN-ISSUES.md).
			killed := keepInstallCopies(w.OutDir, cl)
			return chaos.Schedule{Faults: []chaos.Fault{chaos.KillDuringInstall{Hold: hold, Killed: killed}}, Interval: 2 * time.Second, Duration: 3 * time.Second, Jitter: 0.3}
		})
	return snapshotKills(sc, "install_kills", "no snapshot install was interrupted in this run (the leader took no snapshot past the killed follower, or the follower caught up from the log)")
}

// snapshotKills runs sc with the nodes snapshotting often (snapshotOften),
// and makes a PASS in which metric counted no kill NOT RUN, saying why
// (none): such a run tested nothing of what it is for.
func snapshotKills(sc Scenario, metric, none string) Scenario {
	run := sc.Run
	sc.Run = snapshotOften(func(ctx context.Context, t Target, p Params) Result {
		res := run(ctx, t, p)
		if res.Verdict == reports.Pass && res.Metrics[metric] == 0 {
			res.Verdict = reports.NotRun
			res.Reason = none + ": give the servers a low snapshot threshold, e.g. rqlite+process:?nodes=3&flags=" + snapshotFlags
		}
		return res
	})
	return sc
}

// killDuringSnapshotScenario kills followers as they make a snapshot final
// (chaos.KillDuringSnapshot). Like kill-during-install it needs the nodes to
// snapshot often (snapshotOften), and a run in which no kill landed on a
// persisted snapshot tested nothing of what it is for: NOT RUN, never PASS.
func killDuringSnapshotScenario() Scenario {
	sc := faultScenario("kill-during-snapshot", "a follower is SIGKILLed the moment its live log shows it has written a snapshot's data, "+
		"as its snapshot store makes that snapshot final (renames it, folds the previous one in, reaps the older ones), and restarted; "+
		"again and again, under the concurrent workload "+
		"(a process cluster; its servers get a low snapshot threshold, "+snapshotFlags+", unless the URL sets one)",
		func(cluster.Cluster, *workload.Config) chaos.Schedule {
			return chaos.Schedule{Faults: []chaos.Fault{chaos.KillDuringSnapshot{}}, Interval: 2 * time.Second, Duration: 3 * time.Second, Jitter: 0.3}
		})
	return snapshotKills(sc, "persist_kills", "no follower was killed on a persisted snapshot in this run (none logged one in time)")
}

// longReadRows is how many rows long-reads' first read counts: reads of
// 262–1,018 ms on the loaded machine these runs were measured on
// (docs/DETECTION.md), past the 250 ms an rqlite 9.3.14–9.4.x checkpoint
// waits for readers, though not by much. A read shorter than longReadHold
// doubles the rows of the reads after it (chaos.NewLongReads), so that a
// faster machine's reads grow past the wait; a run whose measured reads
// all fall short of it is NOT RUN (readsHeld).
const (
	longReadRows = 1_000_000
	longReadHold = 2 * checkpointWait
)

// longReadsScenario holds a read open on the leader's database
// (chaos.LongReads) while its snapshots checkpoint the log: on a process
// cluster whose URL sets no snapshot threshold, the servers get a low one
// (snapshotFlags), so that every window meets several snapshots.
func longReadsScenario() Scenario {
	sc := faultScenario("long-reads", "a read that holds the leader's database for up to a second (a count of "+fmt.Sprintf("%d", longReadRows)+
		" rows at level none at first, twice as many after a read shorter than "+longReadHold.String()+") runs on the leader again and again, one after another, for a few seconds at a time, under the concurrent workload "+
		"(a process cluster; its servers get a low snapshot threshold, "+snapshotFlags+", unless the URL sets one, so that their snapshots meet the reader): "+
		"a server must checkpoint, snapshot and serve around a reader, never stop (rqlite#2537)",
		func(cluster.Cluster, *workload.Config) chaos.Schedule {
			return chaos.Schedule{Faults: []chaos.Fault{chaos.NewLongReads(longReadRows, longReadHold)}, Interval: 2 * time.Second, Duration: 5 * time.Second, Jitter: 0.3}
		})
	sc.Run = snapshotOften(readsHeld(sc.Run))
	return sc
}

// checkpointWait is how long an rqlite 9.3.14–9.4.x checkpoint waits for
// the readers of the database before it gives up.
const checkpointWait = 250 * time.Millisecond

// readsHeld turns long-reads' PASS into NOT RUN when no measured read
// (each window's first, metric long_read_ms_max) held the leader's database
// for checkpointWait: no checkpoint then had to wait for a reader, and the
// run did not try what the scenario claims.
func readsHeld(run func(context.Context, Target, Params) Result) func(context.Context, Target, Params) Result {
	return func(ctx context.Context, t Target, p Params) Result {
		res := run(ctx, t, p)
		if ms := res.Metrics["long_read_ms_max"]; res.Verdict == reports.Pass && ms < float64(checkpointWait.Milliseconds()) {
			res.Verdict = reports.NotRun
			res.Reason = strings.TrimSuffix(fmt.Sprintf("no long read held the leader's database for the %v a checkpoint waits for its readers (the longest measured: %.0f ms): "+
				"a faster machine needs longer reads; %s", checkpointWait, ms, res.Reason), "; ")
		}
		return res
	}
}

// snapshotOften runs a scenario with snapshotFlags given to the servers of
// a process cluster whose URL sets no snapshot threshold, and says so in
// the result's reason.
func snapshotOften(run func(context.Context, Target, Params) Result) func(context.Context, Target, Params) Result {
	return func(ctx context.Context, t Target, p Params) Result {
		given := ""
		if u, ok := withSnapshotFlags(t.URL); ok {
			if nt, err := TargetFor(u); err == nil {
				t.Target, given = nt.Target, "its servers were given "+snapshotFlags+" (the URL set no snapshot threshold)"
			}
		}
		res := run(ctx, t, p)
		if given != "" {
			res.Reason = strings.TrimPrefix(res.Reason+"; "+given, "; ")
		}
		return res
	}
}

// mixedLoss is the fraction of packets a node's links lose in
// mixed-faults' packet-loss faults.
const mixedLoss = 0.5

// snapshotFlags make an rqlite leader snapshot every 50 log entries,
// checked every second.
const snapshotFlags = "-raft-snap=50,-raft-snap-int=1s"

// withSnapshotFlags adds snapshotFlags to the flags of an rqlite+process
// URL that sets no snapshot threshold; ok is false (and raw returned) for
// any other URL.
func withSnapshotFlags(raw string) (string, bool) {
	base, query, _ := strings.Cut(raw, "?")
	if base != "rqlite+process:" || strings.Contains(query, "raft-snap") {
		return raw, false
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return raw, false
	}
	flags := snapshotFlags
	if f := q.Get("flags"); f != "" {
		flags = f + "," + snapshotFlags
	}
	q.Set("flags", flags)
	return base + "?" + q.Encode(), true
}

// DefaultFaultDuration is how long a fault scenario's traffic runs when
// --duration is not given (--ops alone would end it before the faults had
// a chance).
const DefaultFaultDuration = 30 * time.Second

// faultOpTimeout bounds each call of a fault scenario's workload: a call
// stuck on a dead or frozen node ends as indeterminate after it, and its
// client moves on to another node.
const faultOpTimeout = 5 * time.Second

// faultCheckTimeout bounds porcupine in a fault scenario; a history it
// cannot decide in that time is reported, never passed.
const faultCheckTimeout = 2 * time.Minute

// clusterStore is a store on a cluster the run started.
type clusterStore interface {
	model.Store
	Cluster() cluster.Cluster
	NodeView(id string, level rqlite.Level) (*rqlite.Store, error)
}

// clusterNeeds are what the fault scenarios need: a cluster this run
// starts and can break.
func clusterNeeds() []backends.Capability {
	return []backends.Capability{backends.ExecutionStore, backends.ServerCluster}
}

func faultScenario(name, summary string, schedule func(cluster.Cluster, *workload.Config) chaos.Schedule) Scenario {
	return Scenario{
		Name: name,
		Summary: summary + "; porcupine and the global checks, then after healing every acknowledged commit on every node " +
			"and all nodes' tables identical at the same applied index",
		Needs: clusterNeeds(),
		Run: func(ctx context.Context, t Target, p Params) Result {
			return runFaults(ctx, t, p, name, schedule)
		},
		Knobs: func(p Params) error {
			return faultWorkload(Target{Target: &backends.Target{}}, p, name, nil).Validate()
		},
	}
}

// openCluster opens the target and finds its cluster, or says why not.
func openCluster(ctx context.Context, t Target, p Params) (clusterStore, *Result) {
	store, err := t.opener(p)(ctx, model.DefaultConfig())
	if err != nil {
		return nil, rqNotRun(ctx, "backend could not be opened: %v", err)
	}
	cs, ok := store.(clusterStore)
	if !ok {
		store.Close()
		return nil, &Result{Verdict: reports.NotRun, Reason: "the backend does not expose a cluster to break"}
	}
	if err := cs.(model.Resetter).Reset(ctx); err != nil {
		cs.Close()
		return nil, rqNotRun(ctx, "backend could not be emptied: %v", err)
	}
	// Every node holds the (empty) tables before the traffic starts, so
	// that a read at level none finds them wherever it lands.
	if _, err := cluster.WaitApplied(ctx, cs.Cluster(), appliedWait); err != nil {
		cs.Close()
		return nil, rqNotRun(ctx, "cluster did not settle: %v", err)
	}
	return cs, nil
}

// rqNotRun is NOT RUN with the reason, or INTERRUPTED when ctx ended.
func rqNotRun(ctx context.Context, format string, a ...any) *Result {
	if ctx.Err() != nil {
		return &Result{Verdict: reports.Interrupted, Reason: "interrupted; the cluster was removed"}
	}
	return &Result{Verdict: reports.NotRun, Reason: strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ")}
}

// faultWorkload is the workload of a fault scenario: the run's knobs, a
// duration rather than an op count, and a shorter per-call timeout, so that
// calls stuck on a dead leader end as indeterminate instead of holding a
// client for long.
func faultWorkload(t Target, p Params, name string, during func(context.Context, func() int64) error) workload.Config {
	cfg := workload.Config{
		Clients: p.Clients, Executions: p.Executions, Duration: p.Duration, Seed: p.Seed,
		TraceMax: model.DefaultTraceMax, OpTimeout: faultOpTimeout, CheckTimeout: faultCheckTimeout,
		OutDir: p.OutDir, KeepArtifacts: true,
		Scenario: name, Store: reports.Redact(t.URL), During: during,
	}
	if cfg.Duration == 0 {
		cfg.Duration = DefaultFaultDuration
	}
	if p.Progress != nil {
		cfg.Progress = &p.Progress.Ops
	}
	return cfg
}

func runFaults(ctx context.Context, t Target, p Params, name string, schedule func(cluster.Cluster, *workload.Config) chaos.Schedule) Result {
	cs, fail := openCluster(ctx, t, p)
	if fail != nil {
		return *fail
	}
	defer cs.Close()
	cl := cs.Cluster()
	lived := countLives(cl)
	ctl := cluster.Control{Cluster: lived}
	tl, err := folder(p).Timeline()
	if err != nil {
		return *rqNotRun(ctx, "%v", err)
	}
	var (
		faultErr error
		sched    chaos.Schedule
	)
	during := func(ctx context.Context, now func() int64) error {
		faultErr = sched.Run(ctx, ctl, now, tl, progressHooks(p))
		return nil // recorded; the checks below say whether it mattered
	}
	// The schedule may hook the workload (kill-after-ack listens to its
	// acknowledgements).
	wcfg := faultWorkload(t, p, name, during)
	wcfg.Observe = observeNodes(cs, lived, p.Seed)
	sched = schedule(cl, &wcfg)
	sched.Seed = p.Seed
	if err := sched.Available(ctl); err != nil {
		return *rqNotRun(ctx, "on this %s cluster: %v", cl.Kind(), err)
	}
	res, err := workload.Run(ctx, cs, wcfg)
	defer saveServerLogs(p, cl)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return Result{Verdict: reports.Interrupted, Reason: "interrupted during the workload; faults healed and the cluster removed"}
		}
		return *rqNotRun(ctx, "workload could not run: %v (faults: %v)", err, faultErr)
	}
	out := historyResult(res)
	notRecovered(&out, res)
	after := checkAfterHeal(ctx, cs, res.History)
	after.apply(&out)
	if out.Verdict == reports.Pass && after.err == nil && after.harness != nil {
		// A node that does not answer a read after the heal did not recover:
		// a finding, not a run that could not start.
		out.Verdict, out.Guarantee = reports.Fail, GuaranteeRecovery
		out.Reason = rqOneLine(GuaranteeRecovery + ": a node's tables could not be read after the heal: " + after.harness.Error())
	}
	inspectNodes(ctx, p, cl, after, out.Verdict == reports.Fail, nodeReader(cs)).apply(&out)
	keepUnrestored(p, &out, after)
	out.Metrics["settle_ms"] = float64(after.settled.Milliseconds())
	events := tl.Faults()
	faultMetrics(out.Metrics, res, events)
	if c := faultContext(firstViolationAt(res), events); c != "" && out.Verdict == reports.Fail && out.Guarantee == res.Guarantee {
		out.Reason += " (" + c + ")"
	}
	out.Metrics["converged_at_index"] = float64(after.index)
	nodeMetrics(&out, res.History)
	if faultErr != nil {
		out.Metrics["fault_errors"] = float64(strings.Count(faultErr.Error(), "\n") + 1)
		if out.Verdict != reports.Pass {
			out.Reason += " (fault errors: " + rqOneLine(faultErr.Error()) + ")"
		}
	}
	noFaultTookEffect(&out, events)
	if res.Verdict == linearizability.Illegal {
		visualizeFaults(ctx, p, res, events)
	}
	return out
}

// historyResult turns the workload's verdict into a Result with its
// figures.
func historyResult(res *workload.Result) Result {
	m := reports.Measure(res.History)
	out := Result{Ops: int64(res.Counts.Ops), Metrics: concurrentMetrics(res), Measured: &m, Verdict: reports.Pass}
	switch res.Verdict {
	case linearizability.Ok:
	case linearizability.Unknown:
		out.Verdict, out.Reason = reports.Fail, "the linearizability checker timed out: verdict unknown"
	default:
		out.Verdict, out.Guarantee, out.Reason = reports.Fail, res.Guarantee, firstViolation(res)
	}
	return out
}

// progressHooks shows the fault in place on the live progress line.
func progressHooks(p Params) chaos.Hooks {
	if p.Progress == nil {
		return chaos.Hooks{}
	}
	return chaos.Hooks{
		Injected: func(name, target string) { p.Progress.Fault.Store(name + " " + target) },
		Healed:   func(string, string) { p.Progress.Fault.Store("") },
	}
}

// saveServerLogs copies every node's log into the run's folder, logs/ (a
// container's from Docker; a process node writes there all along, see
// Target.opener).
func saveServerLogs(p Params, cl cluster.Cluster) {
	dir := folder(p).LogDir()
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.SaveLogs(ctx, dir); err != nil && p.Logger != nil {
		p.Logger.Warn("could not keep the server logs", "err", err)
	}
}

// visualizeFaults redraws the run's visualization with the fault windows.
func visualizeFaults(ctx context.Context, p Params, res *workload.Result, faults []evidence.Fault) {
	if res.Report == nil {
		return
	}
	vctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := folder(p).WriteVisualization(vctx, res.History, res.Report, linearizability.Options{}, faults); err != nil && p.Logger != nil {
		p.Logger.Warn("could not draw the fault windows", "err", err)
	}
}

func rqOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
