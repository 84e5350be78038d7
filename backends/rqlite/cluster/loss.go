package cluster

import (
	"context"
	"fmt"
)

// Packet loss on a node's links to the others, for the chaos fault of
// that name: a degraded network rather than a cut one. Only a process
// cluster offers it (iptables rules on loopback, as Isolate); a
// container's network would need traffic control inside each container.

// PacketLoser is a cluster whose nodes' links can lose packets (a process
// cluster, or a wrapper of one that forwards these).
type PacketLoser interface {
	// PacketLossAvailable says why links cannot lose packets, or nil.
	PacketLossAvailable() error
	// LosePackets makes a random fraction of node id's packets to and from
	// the other nodes disappear until Rejoin.
	LosePackets(ctx context.Context, id string, fraction float64) error
}

// PacketLossAvailable implements PacketLoser: the rules are isolation's.
func (p *Processes) PacketLossAvailable() error { return p.IsolationAvailable() }

// LosePackets implements PacketLoser: clients still reach the node's HTTP
// API unharmed.
func (p *Processes) LosePackets(ctx context.Context, id string, fraction float64) error {
	pr, err := p.proc(id)
	if err != nil {
		return err
	}
	if err := p.IsolationAvailable(); err != nil {
		return err
	}
	return p.fw.lose(ctx, id, pr.uid, pr.httpPort, pr.raftPort, fraction)
}

// PacketLossAvailable says why the cluster's links cannot be made to lose
// packets, or nil.
func (c Control) PacketLossAvailable() error {
	l, ok := c.Cluster.(PacketLoser)
	if !ok {
		return fmt.Errorf("packet loss is injected with iptables on loopback, which a %s cluster does not use", c.Kind())
	}
	return l.PacketLossAvailable()
}

// LosePackets makes node id's links lose fraction of their packets until
// Rejoin.
func (c Control) LosePackets(ctx context.Context, id string, fraction float64) error {
	if err := c.PacketLossAvailable(); err != nil {
		return err
	}
	return c.Cluster.(PacketLoser).LosePackets(ctx, id, fraction)
}
