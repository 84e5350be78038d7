package backends

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/storecheck/storecheck/backends/lagsim"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/libsql/sqld"
	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/worker"
)

// ErrReplicasUnavailable marks a replica set that cannot be had here (no
// sqld, a server that does not start): a workload reports NOT RUN.
var ErrReplicasUnavailable = errors.New("replicas could not be opened")

// Replicas returns the replica set of a target with the Replicas
// capability: simulated clusters on the URL's primary file (lagsim:), or
// go-libsql embedded replicas on an sqld primary (libsql+replica:): the
// URL's, or a fresh one per level that the set starts and its cluster
// stops, its log in logDir. No sqld here is an error wrapping
// ErrReplicasUnavailable, whose message is the NOT RUN reason.
func (t *Target) Replicas(ctx context.Context, logDir string) (*replica.Set, error) {
	switch t.Scheme {
	case lagsim.Scheme:
		return lagsimSet(t.rest)
	case libsql.ReplicaScheme:
		return libsqlSet(ctx, t.rest, logDir)
	}
	_, why := t.Lacks([]Capability{Replicas})
	return nil, errors.New(why)
}

// SimulatesReplicas reports whether the target's replicas are lagsim's
// simulation (in storecheck's process) rather than real ones.
func (t *Target) SimulatesReplicas() bool { return t.Scheme == lagsim.Scheme }

// lagsimSet opens simulated clusters on the URL's primary file.
func lagsimSet(rest string) (*replica.Set, error) {
	t, err := lagsim.ParseURL(rest)
	if err != nil {
		return nil, err
	}
	kind := "lagsim: a simulation of embedded-replica lag (SQLite primary, each replica a snapshot of it held open and moved forward on a schedule), not libSQL"
	if t.Mutant != "" {
		kind += "; mutant " + t.Mutant
	}
	return &replica.Set{
		Kind: kind, Simulation: true, Top: t.Lag, Jitter: t.Jitter,
		Controls: []replica.Control{replica.Stall, replica.Cut, replica.Kill},
		Open: func(ctx context.Context, lvl replica.Level, seed uint64) (replica.Cluster, error) {
			if lvl.Link > 0 {
				return nil, errors.New("a simulation has no link to slow")
			}
			opt := t.Options
			opt.Lag, opt.Seed = lvl.Lag, seed // the run's seed, not the URL's
			c, err := lagsim.OpenCluster(ctx, t.Path, model.DefaultConfig(), opt)
			if err != nil {
				return nil, err
			}
			if err := c.Primary().(model.Resetter).Reset(ctx); err != nil {
				return nil, errors.Join(fmt.Errorf("empty the primary: %w", err), c.Close())
			}
			return lagsimCluster{c}, nil
		},
	}, nil
}

// lagsimCluster offers the simulated faults.
type lagsimCluster struct{ *lagsim.Cluster }

func (c lagsimCluster) CutReplica(_ context.Context, name string) error  { return c.Cut(name) }
func (c lagsimCluster) HealReplica(_ context.Context, name string) error { return c.Heal(name) }
func (c lagsimCluster) KillPrimary(context.Context) error                { c.StopPrimary(); return nil }
func (c lagsimCluster) RestartPrimary(context.Context) error             { c.StartPrimary(); return nil }

// libsqlSet opens clusters of go-libsql embedded replicas on an sqld
// primary: the URL's, or a fresh one per level, so that every level starts
// from an empty replication log.
func libsqlSet(ctx context.Context, rest, logDir string) (*replica.Set, error) {
	t, err := libsql.ParseReplicaURL(rest)
	if err != nil {
		return nil, err
	}
	if _, err := t.ClusterOptions(nil, 0, 0, replicaMutants()); err != nil {
		return nil, err
	}
	where := "the sqld at primary="
	var primaries *libsql.Primaries
	controls := []replica.Control{replica.Stall, replica.Cut}
	var links []int64
	if t.Primary == "" {
		if primaries, err = libsql.FindPrimaries(ctx, t, logDir); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrReplicasUnavailable, err)
		}
		where = "an sqld this run started per level: " + primaries.Describe()
		controls = append(controls, replica.CrashClient, replica.Pause, replica.Kill)
		if primaries.InNamespace() && t.Delay == 0 {
			links = []int64{16_000_000, 4_000_000}
		}
	}
	if t.Mutant != "" {
		where += "; mutant " + t.Mutant
	}
	if t.ReadMutant != "" {
		where += "; read mutant " + t.ReadMutant
	}
	workers, werr := worker.Self()
	if werr != nil {
		controls = slices.DeleteFunc(controls, func(c replica.Control) bool { return c == replica.CrashClient })
	}
	var servers []string
	if primaries != nil {
		servers = []string{primaries.Describe()}
	}
	return &replica.Set{
		Kind: "libSQL embedded replicas (go-libsql) on " + where, Top: t.SyncInterval, Jitter: t.Jitter,
		Controls: controls, Links: links, Servers: servers,
		Open: func(ctx context.Context, lvl replica.Level, seed uint64) (_ replica.Cluster, err error) {
			opt, err := t.ClusterOptions(nil, lvl.Lag, seed, replicaMutants())
			if err != nil {
				return nil, err
			}
			if werr == nil {
				opt.Workers = &workers
			}
			if primaries != nil {
				if opt.Server, err = primaries.Start(ctx, lvl.Label); err != nil {
					return nil, fmt.Errorf("%w: %w", ErrReplicasUnavailable, err)
				}
				opt.OwnServer = true
				if lvl.Link > 0 {
					if err := opt.Server.Net.SetLink(ctx, sqld.Link{Rate: lvl.Link}); err != nil {
						return nil, errors.Join(err, opt.Server.Close())
					}
				}
			} else if lvl.Link > 0 {
				return nil, errors.New("the link to a primary given by URL cannot be slowed")
			}
			c, err := libsql.OpenReplicaCluster(ctx, t, model.DefaultConfig(), opt)
			if err != nil {
				if opt.Server != nil {
					err = errors.Join(err, opt.Server.Close())
				}
				return nil, err
			}
			return c, nil
		},
	}, nil
}
