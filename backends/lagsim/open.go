package lagsim

import (
	"context"
	"errors"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
)

// Store is a lagsim URL opened on its own: one client, replica "r0", and
// the cluster it owns.
type Store struct {
	*replica.Store
	cluster *Cluster
}

// Cluster returns the cluster the store owns.
func (s *Store) Cluster() *Cluster { return s.cluster }

// Close closes the replica and the primary.
func (s *Store) Close() error { return errors.Join(s.Store.Close(), s.cluster.Close()) }

// Open opens the lagsim URL rest (PATH?lag=D…) as one client.
func Open(ctx context.Context, rest string, cfg model.Config) (model.Store, error) {
	t, err := ParseURL(rest)
	if err != nil {
		return nil, err
	}
	c, err := OpenCluster(ctx, t.Path, cfg, t.Options)
	if err != nil {
		return nil, err
	}
	r, err := c.NewReplica(ctx, "r0", 0)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return &Store{Store: r, cluster: c}, nil
}
