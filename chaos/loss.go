package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
)

// LossCluster is a Cluster whose nodes' links to each other can be made to
// lose packets (iptables' statistic match on loopback).
type LossCluster interface {
	Cluster
	// PacketLossAvailable says why links cannot lose packets here, or nil.
	PacketLossAvailable() error
	// LosePackets makes a random fraction of node id's packets to and from
	// the other nodes disappear until Rejoin.
	LosePackets(ctx context.Context, id string, fraction float64) error
}

// PacketLoss degrades the network instead of cutting it: one node, picked
// at random (the leader as likely as any follower), loses Fraction of the
// packets on its links to the others for the fault's duration, and heals
// by getting them back. TCP retransmits what is lost, so the node's Raft
// messages arrive late, in bursts, or after the sender's timeout gave up on
// them: heartbeats missed, elections started by a node that can still half
// hear, appends retried — the flaky link Jepsen's partition nemeses leave
// out. Clients still reach the node's HTTP API.
type PacketLoss struct {
	// Fraction of the packets lost, in (0, 1].
	Fraction float64
}

func (PacketLoss) Name() string { return "packet-loss" }

func (f PacketLoss) availableOn(c Cluster) error {
	if err := multiNode(c); err != nil {
		return err
	}
	if !(f.Fraction > 0 && f.Fraction <= 1) {
		return fmt.Errorf("packet loss of %v: want a fraction in (0, 1]", f.Fraction)
	}
	lc, ok := c.(LossCluster)
	if !ok {
		return errors.New("needs a cluster whose links can lose packets")
	}
	return lc.PacketLossAvailable()
}

func (f PacketLoss) injectOn(ctx context.Context, c Cluster, rng *rand.Rand) (Injection, error) {
	lc := c.(LossCluster)
	ids := c.NodeIDs()
	id := ids[rng.IntN(len(ids))]
	role := "follower"
	if leader, err := c.Leader(ctx); err == nil && leader == id {
		role = "leader"
	}
	inj := Injection{Target: id,
		Detail: fmt.Sprintf("%s %s loses %.0f%% of its packets to and from the other nodes", role, id, f.Fraction*100),
		Heal: func(ctx context.Context) error {
			if err := c.Rejoin(ctx, id); err != nil {
				return fmt.Errorf("end the packet loss of %s: %w", id, err)
			}
			return c.WaitHealthy(ctx, healthyWait)
		}}
	return inj, lc.LosePackets(ctx, id, f.Fraction)
}

func (f PacketLoss) Available(on any) error { return onCluster{f}.Available(on) }
func (f PacketLoss) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}
