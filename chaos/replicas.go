package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/storecheck/storecheck/backends/replica"
)

// Replicas is what the replica faults act on: a cluster of embedded
// replicas (or their simulation) and its clients' replica stores.
type Replicas struct {
	Cluster replica.Cluster
	Stores  map[string]*replica.Store
	// Reopened, when set, is told of every replica client reopened after
	// its process was killed (CrashReplicaClient's heal), with what its
	// file showed.
	Reopened func(*replica.Reopened)
}

// StallReplica stops one replica's syncs and heals by resuming them.
type StallReplica struct{ Replica string }

// CutReplica breaks one client's link to the primary and heals by
// restoring it.
type CutReplica struct{ Replica string }

// CrashReplicaClient SIGKILLs a replica client running in a process of
// its own while it syncs (Delay after its sync began) and heals by
// reopening its file here, as a replica syncing on Stream.
type CrashReplicaClient struct {
	Replica string
	Delay   time.Duration
	Stream  uint64
}

// PausePrimary freezes the primary (SIGSTOP) and heals by thawing it.
type PausePrimary struct{}

// KillPrimary SIGKILLs the primary and heals by starting it again on its
// data.
type KillPrimary struct{}

func (StallReplica) Name() string       { return string(replica.Stall) }
func (CutReplica) Name() string         { return string(replica.Cut) }
func (CrashReplicaClient) Name() string { return string(replica.CrashClient) }
func (PausePrimary) Name() string       { return string(replica.Pause) }
func (KillPrimary) Name() string        { return string(replica.Kill) }

// replicasOf is on as Replicas, or why not.
func replicasOf(on any, fault string) (*Replicas, error) {
	r, ok := on.(*Replicas)
	if !ok || r.Cluster == nil {
		return nil, fmt.Errorf("%s acts on a cluster of replicas, not on %T", fault, on)
	}
	return r, nil
}

// controlOf is r's cluster as the control T, or why not.
func controlOf[T any](on any, fault, what string) (T, error) {
	var zero T
	r, err := replicasOf(on, fault)
	if err != nil {
		return zero, err
	}
	c, ok := r.Cluster.(T)
	if !ok {
		return zero, fmt.Errorf("%s: this cluster cannot %s", fault, what)
	}
	return c, nil
}

func (f StallReplica) store(on any) (*replica.Store, error) {
	r, err := replicasOf(on, f.Name())
	if err != nil {
		return nil, err
	}
	s := r.Stores[f.Replica]
	if s == nil {
		return nil, fmt.Errorf("%s: no replica %q", f.Name(), f.Replica)
	}
	return s, nil
}

func (f StallReplica) Available(on any) error { _, err := f.store(on); return err }

func (f StallReplica) Inject(_ context.Context, on any, _ *rand.Rand) (Injection, error) {
	s, err := f.store(on)
	if err != nil {
		return Injection{}, err
	}
	s.StallSyncs()
	return Injection{Target: f.Replica, Detail: "replica " + f.Replica + " stops syncing",
		Heal: func(context.Context) error { s.ResumeSyncs(); return nil }}, nil
}

func (f CutReplica) Available(on any) error {
	_, err := controlOf[replica.Cutter](on, f.Name(), "cut a client's link")
	return err
}

func (f CutReplica) Inject(ctx context.Context, on any, _ *rand.Rand) (Injection, error) {
	c, err := controlOf[replica.Cutter](on, f.Name(), "cut a client's link")
	if err != nil {
		return Injection{}, err
	}
	inj := Injection{Target: f.Replica, Detail: "client " + f.Replica + " cut from the primary",
		Heal: func(ctx context.Context) error { return c.HealReplica(ctx, f.Replica) }}
	return inj, c.CutReplica(ctx, f.Replica)
}

func (f CrashReplicaClient) Available(on any) error {
	_, err := controlOf[replica.ClientCrasher](on, f.Name(), "run replica clients in processes")
	return err
}

func (f CrashReplicaClient) Inject(ctx context.Context, on any, _ *rand.Rand) (Injection, error) {
	c, err := controlOf[replica.ClientCrasher](on, f.Name(), "run replica clients in processes")
	if err != nil {
		return Injection{}, err
	}
	r, _ := replicasOf(on, f.Name())
	heal := func(ctx context.Context) error {
		re, err := c.ReopenReplica(ctx, f.Replica, f.Stream)
		if err != nil {
			return err
		}
		if r.Reopened != nil {
			r.Reopened(re)
		}
		return nil
	}
	at, err := c.KillReplicaProcess(ctx, f.Replica, f.Delay)
	if err != nil {
		return Injection{Target: f.Replica}, err
	}
	return Injection{Target: f.Replica, Detail: fmt.Sprintf("client %s's process SIGKILLed while it synced (it had reached position %d)", f.Replica, at),
		Heal: heal}, nil
}

func (f PausePrimary) Available(on any) error {
	_, err := controlOf[replica.PrimaryPauser](on, f.Name(), "pause its primary")
	return err
}

func (f PausePrimary) Inject(ctx context.Context, on any, _ *rand.Rand) (Injection, error) {
	c, err := controlOf[replica.PrimaryPauser](on, f.Name(), "pause its primary")
	if err != nil {
		return Injection{}, err
	}
	return Injection{Target: "primary", Detail: "primary frozen", Heal: c.ResumePrimary}, c.PausePrimary(ctx)
}

func (f KillPrimary) Available(on any) error {
	_, err := controlOf[replica.PrimaryKiller](on, f.Name(), "kill its primary")
	return err
}

func (f KillPrimary) Inject(ctx context.Context, on any, _ *rand.Rand) (Injection, error) {
	c, err := controlOf[replica.PrimaryKiller](on, f.Name(), "kill its primary")
	if err != nil {
		return Injection{}, err
	}
	return Injection{Target: "primary", Detail: "primary killed, restarted on its data", Heal: c.RestartPrimary}, c.KillPrimary(ctx)
}
