package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// lossyFake is a fake cluster whose links can lose packets: a node losing
// them counts as isolated until Rejoin, and the fractions asked for are
// kept.
type lossyFake struct {
	*fakeCluster
	fractions []float64
	noLoss    error
}

func (f *lossyFake) PacketLossAvailable() error { return f.noLoss }
func (f *lossyFake) LosePackets(_ context.Context, id string, fraction float64) error {
	f.fractions = append(f.fractions, fraction)
	return f.set(f.isolated, id, true)
}

// TestPacketLoss: the fault needs a cluster whose links can lose packets
// and a fraction in (0, 1]; it hits the leader as well as the followers,
// asks for its fraction, names the node's role, and its heal gets every
// packet back.
func TestPacketLoss(t *testing.T) {
	ctx := context.Background()
	if err := (PacketLoss{Fraction: 0.25}).Available(newFake()); err == nil || !strings.Contains(err.Error(), "lose packets") {
		t.Errorf("available on a cluster without packet loss: %v", err)
	}
	c := &lossyFake{fakeCluster: newFake()}
	for _, bad := range []float64{0, -0.1, 1.5} {
		if err := (PacketLoss{Fraction: bad}).Available(c); err == nil {
			t.Errorf("a loss of %v is available", bad)
		}
	}
	c.noLoss = errors.New("no iptables")
	if err := (PacketLoss{Fraction: 0.25}).Available(c); err == nil {
		t.Error("available where the cluster says packet loss is not")
	}
	c.noLoss = nil
	f := PacketLoss{Fraction: 0.25}
	if err := f.Available(c); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hit := map[string]bool{}
	for range 30 {
		inj, err := f.Inject(ctx, c, rng)
		if err != nil {
			t.Fatal(err)
		}
		hit[inj.Target] = true
		role := "follower "
		if inj.Target == "n1" {
			role = "leader "
		}
		if !strings.HasPrefix(inj.Detail, role+inj.Target) || !strings.Contains(inj.Detail, "25%") {
			t.Errorf("detail %q: want it to name %s%s and 25%%", inj.Detail, role, inj.Target)
		}
		if b := c.broken(); len(b) != 1 {
			t.Fatalf("after the injection: %v broken, want the target only", b)
		}
		if err := inj.Heal(ctx); err != nil {
			t.Fatal(err)
		}
		if b := c.broken(); len(b) > 0 {
			t.Fatalf("after the heal: %v still broken", b)
		}
	}
	if len(hit) != 3 {
		t.Errorf("30 injections hit %v; want every node, the leader included", hit)
	}
	for _, fr := range c.fractions {
		if fr != 0.25 {
			t.Errorf("asked for a loss of %v, want 0.25", fr)
		}
	}
}
