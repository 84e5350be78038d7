package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/storecheck/storecheck/backends/internal/pids"
)

// ChainPrefix starts the name of every iptables chain a run creates, so
// that leftovers can be found (LeftoverChains). The name goes on with the
// process id of the run that made it, so that the next run removes what a
// killed one left (removeStaleChains).
const ChainPrefix = "storecheck-"

// firewall isolates loopback processes with iptables rules in a chain of
// its own, jumped to from OUTPUT. All loopback traffic is locally
// generated, so OUTPUT sees every packet; the owner match tells the
// isolated node's packets apart, since every node runs as its own user id.
// The chain and its jump exist only while some node is isolated or until
// close, which deletes both.
type firewall struct {
	mu      sync.Mutex
	chain   string
	created bool
	rules   map[string][][]string // per node id, as appended
}

// FirewallAvailable says why isolation by iptables cannot work here.
func FirewallAvailable() error {
	if os.Geteuid() != 0 {
		return errors.New("isolating a node needs root (iptables rules, and nodes run as their own user ids)")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		return errors.New("isolating a node needs iptables (apt-get install iptables)")
	}
	return nil
}

func newFirewall() *firewall {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	// At most 11+7+1+6 = 25 characters: iptables takes 28.
	return &firewall{chain: ChainPrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b), rules: map[string][][]string{}}
}

// chainOwner is the process id in a chain name newFirewall made.
func chainOwner(chain string) (int, bool) {
	rest, ok := strings.CutPrefix(chain, ChainPrefix)
	if !ok {
		return 0, false
	}
	pid, suffix, ok := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 || len(suffix) != 6 {
		return 0, false
	}
	return n, true
}

// removeStaleChains deletes the chains, their rules and the jumps to them
// of runs that are gone (a run SIGKILLed while a node was isolated): their
// rules would drop the packets of whatever next runs as those user ids.
func removeStaleChains(ctx context.Context) error {
	chains, err := LeftoverChains(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range chains {
		pid, ok := chainOwner(c)
		if !ok || pid == os.Getpid() || pids.Alive(pid) {
			continue
		}
		stale := &firewall{chain: c, created: true}
		if err := stale.close(ctx); err != nil && !chainGone(ctx, c) {
			errs = append(errs, fmt.Errorf("remove the chain %s that process %d left: %w", c, pid, err))
		}
	}
	return errors.Join(errs...)
}

// chainGone says whether chain no longer exists (another process removed
// it).
func chainGone(ctx context.Context, chain string) bool {
	chains, err := LeftoverChains(ctx)
	return err == nil && !slices.Contains(chains, chain)
}

// iptables runs iptables with args, -w so that it waits for the xtables lock.
func iptables(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "iptables", append([]string{"-w", "5"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// ensure creates the chain and the jump to it, once.
func (f *firewall) ensure(ctx context.Context) error {
	if f.created {
		return nil
	}
	// Best effort, as the other sweeps of leftovers: a chain another run
	// left is not this run's failure, and one a concurrent run removed
	// between the listing and the removal here fails iptables -F and -X.
	// What stays is tried again by the next isolation.
	_ = removeStaleChains(ctx)
	if err := iptables(ctx, "-N", f.chain); err != nil {
		return err
	}
	f.created = true // from here on close deletes it
	return iptables(ctx, "-I", "OUTPUT", "1", "-j", f.chain)
}

// isolate drops every packet to the node's Raft port, and every packet the
// node sends except its HTTP answers: no other node reaches it and it
// reaches no other node (not even to forward a client's request), while
// clients still reach its HTTP API.
func (f *firewall) isolate(ctx context.Context, id string, uid uint32, httpPort, raftPort int) error {
	return f.drop(ctx, id, linkRules(uid, httpPort, raftPort, nil))
}

// lose drops a random fraction of the packets isolate drops (iptables'
// statistic match, drawn per packet by the kernel): the node's links to
// the others stay up but lose packets, so TCP retransmits and its Raft
// messages arrive late, out of step, or after a timeout gave up on them.
// The packets of connections another node opened lose the fraction each
// way; those of connections the node opened lose it on the way out.
func (f *firewall) lose(ctx context.Context, id string, uid uint32, httpPort, raftPort int, fraction float64) error {
	if !(fraction > 0 && fraction <= 1) {
		return fmt.Errorf("packet loss %v: want a fraction in (0, 1]", fraction)
	}
	random := []string{"-m", "statistic", "--mode", "random", "--probability", strconv.FormatFloat(fraction, 'f', 4, 64)}
	return f.drop(ctx, id, linkRules(uid, httpPort, raftPort, random))
}

// linkRules are the rules that drop a node's Raft traffic, each narrowed by
// match (none: every such packet).
func linkRules(uid uint32, httpPort, raftPort int, match []string) [][]string {
	rule := func(r ...string) []string {
		return append(append(r, match...), "-j", "DROP")
	}
	return [][]string{
		rule("-o", "lo", "-p", "tcp", "--dport", strconv.Itoa(raftPort)),
		rule("-o", "lo", "-p", "tcp", "-m", "owner", "--uid-owner", strconv.FormatUint(uint64(uid), 10), "!", "--sport", strconv.Itoa(httpPort)),
	}
}

// drop appends rules for node id, which has none yet; rejoin deletes them.
func (f *firewall) drop(ctx context.Context, id string, rules [][]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rules[id]) > 0 {
		return fmt.Errorf("%s is already isolated or losing packets", id)
	}
	if err := f.ensure(ctx); err != nil {
		return err
	}
	for _, r := range rules {
		if err := iptables(ctx, append([]string{"-A", f.chain}, r...)...); err != nil {
			return err
		}
		f.rules[id] = append(f.rules[id], r)
	}
	return nil
}

// rejoin deletes the node's rules.
func (f *firewall) rejoin(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, r := range f.rules[id] {
		if err := iptables(ctx, append([]string{"-D", f.chain}, r...)...); err != nil {
			errs = append(errs, err)
		}
	}
	delete(f.rules, id)
	return errors.Join(errs...)
}

// close deletes the jump, the rules and the chain.
func (f *firewall) close(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.created {
		return nil
	}
	var errs []error
	// -D fails harmlessly when ensure stopped before inserting the jump.
	if err := iptables(ctx, "-D", "OUTPUT", "-j", f.chain); err != nil && !strings.Contains(err.Error(), "does not exist") && !strings.Contains(err.Error(), "No chain/target/match") && !strings.Contains(err.Error(), "Bad rule") {
		errs = append(errs, err)
	}
	if err := iptables(ctx, "-F", f.chain); err != nil {
		errs = append(errs, err)
	}
	if err := iptables(ctx, "-X", f.chain); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		f.created, f.rules = false, map[string][][]string{}
	}
	return errors.Join(errs...)
}

// LeftoverChains lists the iptables chains whose names start with
// ChainPrefix: a run that cleaned up leaves none. It returns nil when
// iptables is not there.
func LeftoverChains(ctx context.Context) ([]string, error) {
	if _, err := exec.LookPath("iptables"); err != nil {
		return nil, nil
	}
	out, err := exec.CommandContext(ctx, "iptables", "-w", "5", "-S").Output()
	if err != nil {
		return nil, fmt.Errorf("iptables -S: %w", err)
	}
	var chains []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(line, "-N "); ok && strings.HasPrefix(name, ChainPrefix) {
			chains = append(chains, name)
		}
	}
	return chains, nil
}
