package replicalag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/lagsim"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/libsql/sqld"
	"github.com/storecheck/storecheck/chaos/worker"
	"github.com/storecheck/storecheck/model"
)

// Applies reports whether a sweep can run on a backend URL, and if not,
// why.
func Applies(rawURL string) (bool, string) {
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch scheme {
	case lagsim.Scheme, libsqlReplicaScheme:
		return true, ""
	}
	return false, "it needs replicas: a lagsim: (simulated) or libsql+replica: (sqld) backend"
}

// TargetFor returns the target a backend URL names: lagsim:PATH?lag=D
// (the simulation) or libsql+replica:PATH?… (sqld and embedded replicas).
// A server the target starts writes its log into logDir.
func TargetFor(ctx context.Context, rawURL, logDir string) (Target, error) {
	scheme, rest, _ := strings.Cut(rawURL, ":")
	switch scheme {
	case lagsim.Scheme:
		return lagsimTarget(rest)
	case libsqlReplicaScheme:
		return libsqlTarget(ctx, rest, logDir)
	}
	_, why := Applies(rawURL)
	return Target{}, errors.New(why)
}

// lagsimTarget opens simulated clusters on the URL's primary file.
func lagsimTarget(rest string) (Target, error) {
	t, err := lagsim.ParseURL(rest)
	if err != nil {
		return Target{}, err
	}
	kind := "lagsim: a simulation of embedded-replica lag (SQLite primary, replica files refreshed by the backup API), not libSQL"
	if t.Mutant != "" {
		kind += "; mutant " + t.Mutant
	}
	return Target{
		Kind: kind, Simulation: true, Top: t.Lag, Jitter: t.Jitter, Faults: Faults(lagsimCluster{}),
		Open: func(ctx context.Context, lvl Level, seed uint64) (Cluster, error) {
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

// libsqlReplicaScheme is the URL scheme of real embedded replicas.
const libsqlReplicaScheme = libsql.ReplicaScheme

// libsqlTarget opens clusters of go-libsql embedded replicas on an sqld
// primary: the URL's, or a fresh one per level that this run starts (and
// stops with the level's cluster), so that every level starts from an
// empty replication log. No sqld here (no binary, no local image) is an
// error wrapping ErrNotOpened, whose message is the NOT RUN reason.
func libsqlTarget(ctx context.Context, rest, logDir string) (Target, error) {
	t, err := libsql.ParseReplicaURL(rest)
	if err != nil {
		return Target{}, err
	}
	if _, err := t.ClusterOptions(nil, 0, 0, backends.ReplicaWriters); err != nil {
		return Target{}, err
	}
	where := "the sqld at primary="
	var primaries *libsql.Primaries
	faults := []string{FaultStall, FaultCut}
	var links []int64
	if t.Primary == "" {
		if primaries, err = libsql.FindPrimaries(ctx, t, logDir); err != nil {
			return Target{}, fmt.Errorf("%w: %w", errNotOpened, err)
		}
		where = "an sqld this run started per level: " + primaries.Describe()
		faults = Faults(&libsql.ReplicaCluster{})
		if primaries.InNamespace() && t.Delay == 0 {
			links = DefaultLinks()
		}
	}
	if t.Mutant != "" {
		where += "; mutant " + t.Mutant
	}
	workers, werr := worker.Self()
	if werr != nil {
		faults = slices.DeleteFunc(faults, func(f string) bool { return f == FaultCrashReplica })
	}
	var servers []string
	if primaries != nil {
		servers = []string{primaries.Describe()}
	}
	return Target{
		Kind: "libSQL embedded replicas (go-libsql) on " + where, Top: t.SyncInterval, Jitter: t.Jitter,
		Faults: faults, Links: links, Servers: servers,
		Open: func(ctx context.Context, lvl Level, seed uint64) (_ Cluster, err error) {
			opt, err := t.ClusterOptions(nil, lvl.Lag, seed, backends.ReplicaWriters)
			if err != nil {
				return nil, err
			}
			if werr == nil {
				opt.Workers = &workers
			}
			if primaries != nil {
				if opt.Server, err = primaries.Start(ctx, lvl.Label); err != nil {
					return nil, err
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
