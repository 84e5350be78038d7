//go:build cgo

package libsql

import (
	"context"
	"errors"
	"fmt"

	"github.com/storecheck/storecheck/backends/internal/logdir"
	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
)

// ReplicaStore is a libsql+replica URL opened on its own: one client,
// replica "r0" at the URL's path, and what it started.
type ReplicaStore struct {
	*replica.Store
	cluster *ReplicaCluster
	primary *Primary // the sqld it started, if any
}

// Cluster returns the cluster the store owns.
func (s *ReplicaStore) Cluster() *ReplicaCluster { return s.cluster }

// Servers says which primary the store syncs from.
func (s *ReplicaStore) Servers() []string {
	if s.primary != nil {
		return []string{s.primary.Describe()}
	}
	return []string{"the sqld at primary= (not started by storecheck)"}
}

// Close closes the replica and the cluster, then stops the sqld it started.
func (s *ReplicaStore) Close() error {
	err := errors.Join(s.Store.Close(), s.cluster.Close())
	if s.primary != nil {
		err = errors.Join(err, s.primary.Close())
	}
	return err
}

// OpenReplica opens the libsql+replica URL rest as one client: loads from
// an embedded replica at the URL's path, commits on the primary. Without
// primary= it starts sqld (see StartPrimary) and stops it on Close.
func OpenReplica(ctx context.Context, rest string, cfg model.Config, mutants Mutants) (model.Store, error) {
	t, err := ParseReplicaURL(rest)
	if err != nil {
		return nil, err
	}
	opt, err := t.ClusterOptions(nil, t.SyncInterval, 1, mutants)
	if err != nil {
		return nil, err
	}
	if t.Primary == "" {
		if opt.Server, err = StartPrimary(ctx, t, logdir.From(ctx)); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (model.Store, error) {
		if opt.Server != nil {
			err = errors.Join(err, opt.Server.Close())
		}
		return nil, err
	}
	c, err := OpenReplicaCluster(ctx, t, cfg, opt)
	if err != nil {
		return fail(err)
	}
	// The file at the URL's path is r0's replica of a primary this run
	// has just emptied: whatever it held (an earlier run's replica, or any
	// SQLite file, which go-libsql refuses to sync into) is removed first,
	// as every backend empties the database a run is pointed at.
	if err := removeReplicaFiles(t.Path); err != nil {
		return fail(errors.Join(fmt.Errorf("%s: remove the previous replica at %s: %w", ReplicaScheme, t.Path, err), c.Close()))
	}
	r, err := c.newReplicaAt(ctx, "r0", 0, t.Path)
	if err != nil {
		return fail(errors.Join(err, c.Close()))
	}
	return &ReplicaStore{Store: r, cluster: c, primary: opt.Server}, nil
}
