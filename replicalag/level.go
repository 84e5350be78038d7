package replicalag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/chaos"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// phase is one level of the sweep, or the fault phase.
type phase struct {
	index   int           // position, for seed streams
	name    string        // "lag_200ms" or "faults"
	lag     time.Duration // the replicas' sync interval
	link    int64         // the link's rate in bits per second; 0: as it is
	updates int           // the plan's updates, all clients together
	time    time.Duration // traffic bound
	faults  bool
}

// errNotOpened marks a cluster that could not be opened: the backend is
// not there, which a scenario reports as NOT RUN.
var errNotOpened = backends.ErrReplicasUnavailable

// runPhase opens a fresh cluster, runs the traffic (and faults), heals,
// checks and measures.
func runPhase(ctx context.Context, t *Target, cfg *Config, ph phase) (res *LevelResult, err error) {
	cl, err := t.Open(ctx, Level{Lag: ph.lag, Link: ph.link, Label: ph.name}, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errNotOpened, ph.name, err)
	}
	defer func() { err = errors.Join(err, cl.Close()) }()
	names := make([]string, cfg.Clients)
	replicas := map[string]*replica.Store{}
	var stores []*replica.Store
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i)
		r, err := cl.NewReplica(ctx, names[i], stream(ph.index, i, useSchedule))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errNotOpened, ph.name, err)
		}
		replicas[names[i]], stores = r, append(stores, r)
	}
	execs := cfg.executionIDs()
	if err := checkEmpty(ctx, cl.Primary(), execs); err != nil {
		return nil, err
	}
	rec := linearizability.NewRecorder(cl.Primary())
	plans := newPlans(cfg.Seed, ph.index, cfg.Clients, ph.updates, cfg.Executions)
	clients := make([]*client, cfg.Clients)
	for i, r := range stores {
		c := rec.NewClient(linearizability.ClientOptions{Store: r, Replica: r.Name(), ReadYourWrites: r.ReadYourWrites()})
		clients[i] = &client{plan: plans[i], c: c, execs: execs, tries: cfg.MaxAttempts, timeout: cfg.OpTimeout}
	}

	start := time.Now()
	deadline := start.Add(ph.time)
	var back *reopened
	var timeline *evidence.Timeline
	var faultErr error
	var wg sync.WaitGroup
	if ph.faults {
		plan := faultPlan(cfg.Seed, names, faultsOf(t))
		if err := startProcesses(ctx, cl, plan); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errNotOpened, ph.name, err)
		}
		back = &reopened{}
		faults := faultSteps(plan, &chaos.Replicas{Cluster: cl, Stores: replicas, Reopened: back.add}, cfg.Seed)
		if timeline, err = evidence.At(cfg.OutDir).Phase(ph.name).Timeline(); err != nil {
			return nil, fmt.Errorf("replicalag: %s: %w", ph.name, err)
		}
		start = time.Now()
		deadline = start.Add(min(ph.time, faults.End()+faultTail))
		wg.Go(func() { faultErr = faults.Run(ctx, rec.Now, timeline) })
	}
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Go(func() { errs[i] = c.run(ctx, deadline, ph.faults, cfg.Progress) })
	}
	wg.Wait()
	traffic := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("replicalag: %s: %w", ph.name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("replicalag: %s stopped: %w", ph.name, err)
	}

	checked := names
	if back != nil {
		for _, r := range back.stores {
			stores, checked = append(stores, r), append(checked, r.Name())
		}
	}
	h, notRecovered := heal(ctx, rec, stores, execs)
	if notRecovered != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("replicalag: %s stopped during the heal: %w", ph.name, ctx.Err())
	}
	h.Meta = linearizability.Meta{TraceMax: model.DefaultTraceMax, Seed: cfg.Seed, Scenario: "replica-lag-conflict/" + ph.name, Store: cfg.Store}
	rep, err := linearizability.Check(ctx, h, linearizability.Options{Timeout: cfg.CheckTimeout})
	if err != nil {
		return nil, fmt.Errorf("replicalag: %s: check: %w", ph.name, err)
	}
	res = measure(h, rep, clients)
	res.Name, res.Lag, res.LinkRate, res.TrafficMS = ph.name, ph.lag, ph.link, traffic.Milliseconds()
	if notRecovered != nil {
		res.addViolations(guaranteeAvailability, []string{fmt.Sprintf("%s: the cluster did not serve after the heal: %v", guaranteeAvailability, notRecovered)})
	}
	broken, notes := converge(ctx, cl, checked)
	if notRecovered != nil {
		broken, notes = nil, append(notes, "convergence not checked: the cluster did not serve after the heal")
	}
	res.addViolations(guaranteeConvergence, broken)
	res.Notes = append(res.Notes, notes...)
	if back != nil {
		res.Faults = timeline.Faults()
		if faultErr != nil {
			res.Notes = append(res.Notes, "faults not injected or healed as planned: "+faultErr.Error())
		}
		for _, b := range back.broken {
			guarantee, _, _ := strings.Cut(b, ":")
			res.addViolations(guarantee, []string{b})
		}
	}
	if cfg.OutDir != "" {
		if err := writeArtifacts(ctx, evidence.At(cfg.OutDir).Phase(ph.name), h, rep, res.Faults, cfg.CheckTimeout); err != nil {
			return res, err
		}
	}
	return res, nil
}

// guaranteeAvailability names a cluster that does not serve after the
// heal.
const guaranteeAvailability = "availability"

// startProcesses starts the replica clients that run in processes of their
// own for the plan's crash-replica fault.
func startProcesses(ctx context.Context, cl Cluster, plan []faultStep) error {
	for _, s := range plan {
		if s.Fault != FaultCrashReplica {
			continue
		}
		c, ok := cl.(ReplicaCrasher)
		if !ok {
			return fmt.Errorf("the plan kills a replica process, and this cluster runs none")
		}
		if err := c.StartReplicaProcess(ctx, s.Target); err != nil {
			return err
		}
	}
	return nil
}

// heal takes the primary's heal reads, then brings every replica up to
// the primary and takes its heal loads, and returns the whole history. A
// cluster that does not serve them within linearizability.RecoveryBound
// did not recover: the error (wrapping linearizability.ErrNotRecovered) is
// a finding, and the history recorded so far is returned with it, to be
// checked all the same.
func heal(ctx context.Context, rec *linearizability.Recorder, stores []*replica.Store, execs []string) (linearizability.History, error) {
	err := linearizability.Heal(ctx, rec.HealClient(), rec.History())
	if err == nil {
		replicas := make([]linearizability.Replica, len(stores))
		for i, r := range stores {
			replicas[i] = r
		}
		err = linearizability.HealReplicas(ctx, rec, replicas, execs)
	}
	return rec.History(), err
}

// checkEmpty refuses a primary that holds rows the level did not write.
func checkEmpty(ctx context.Context, s model.Store, execs []string) error {
	for _, e := range execs {
		exe, err := s.Load(ctx, e)
		if err != nil {
			return fmt.Errorf("replicalag: check the primary is empty: %w", err)
		}
		if exe != nil {
			return fmt.Errorf("replicalag: the primary holds execution %s already; it must start empty", e)
		}
	}
	outbox, err := s.PendingOutbox(ctx)
	if err != nil {
		return fmt.Errorf("replicalag: check the primary is empty: %w", err)
	}
	timers, err := s.DueTimers(ctx, math.MaxFloat64)
	if err != nil {
		return fmt.Errorf("replicalag: check the primary is empty: %w", err)
	}
	if len(outbox)+len(timers) > 0 {
		return fmt.Errorf("replicalag: the primary holds %d outbox and %d timer rows; it must start empty", len(outbox), len(timers))
	}
	return nil
}

// writeArtifacts keeps a phase's evidence in its folder: the history, the
// verdict and violations, and for an illegal history porcupine's
// visualization with the fault windows (the fault phase's timeline wrote
// the fault log as the faults happened).
func writeArtifacts(ctx context.Context, f evidence.Folder, h linearizability.History, rep *linearizability.Report, faults []evidence.Fault, timeout time.Duration) error {
	if _, err := f.WriteHistory(h); err != nil {
		return fmt.Errorf("replicalag: artifacts: %w", err)
	}
	if _, err := f.WriteVerdict(evidence.VerdictOf(rep)); err != nil {
		return fmt.Errorf("replicalag: artifacts: %w", err)
	}
	if rep.Verdict == linearizability.Illegal {
		if _, err := f.WriteVisualization(ctx, h, rep, linearizability.Options{Timeout: timeout}, faults); err != nil {
			return fmt.Errorf("replicalag: artifacts: %w", err)
		}
	}
	return nil
}
