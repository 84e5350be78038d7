package cluster

import (
	"context"
	"fmt"
	"time"
)

// Control adds to a Cluster the operations that read its state over HTTP
// (who leads, is every node serving) and asks the leader to step down:
// with it, a cluster is what package chaos calls a Cluster.
type Control struct{ Cluster }

// NodeIDs lists the node ids.
func (c Control) NodeIDs() []string {
	var ids []string
	for _, n := range c.Nodes() {
		ids = append(ids, n.ID)
	}
	return ids
}

// Leader returns the id of the node that leads now.
func (c Control) Leader(ctx context.Context) (string, error) {
	n, err := Leader(ctx, c.Cluster)
	return n.ID, err
}

// WaitLeader waits until a node other than except leads and serves.
func (c Control) WaitLeader(ctx context.Context, except string, timeout time.Duration) (string, error) {
	n, err := WaitLeader(ctx, c.Cluster, except, timeout)
	return n.ID, err
}

// WaitHealthy waits until every node serves.
func (c Control) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	return WaitReady(ctx, c.Cluster, timeout)
}

// StepDown asks the leader to hand over leadership and waits for it to.
func (c Control) StepDown(ctx context.Context) error {
	n, err := Leader(ctx, c.Cluster)
	if err != nil {
		return fmt.Errorf("step down: %w", err)
	}
	return StepDown(ctx, n.HTTPAddr)
}

// ForwardStats reads what node id says of the writes it forwarded to the
// leader (GetForwardStats).
func (c Control) ForwardStats(ctx context.Context, id string) (ForwardStats, error) {
	for _, n := range c.Nodes() {
		if n.ID == id {
			return GetForwardStats(ctx, n.HTTPAddr)
		}
	}
	return ForwardStats{}, fmt.Errorf("%w %q", ErrUnknownNode, id)
}
