package sqld

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/storecheck/storecheck/backends/internal/pids"
)

// A Namespace is a network namespace the run creates for its primary,
// joined to the host by a veth pair with a /30 of its own: traffic between
// the replicas (on the host) and the primary (inside) crosses a real link
// that Linux traffic control can slow down (netem delay, jitter, loss) and
// that can be cut. Nothing outside the namespace and its veth pair is
// touched. Its name carries the creating process's pid, so that a later
// run removes what a killed one left (RemoveStaleNamespaces).
type Namespace struct {
	name     string
	hostIf   string
	nsIf     string
	hostAddr netip.Addr
	nsAddr   netip.Addr
}

// namespacePrefix starts the name of every namespace storecheck creates.
const namespacePrefix = "storecheck-"

// NamespacesAvailable says why namespaces cannot be made here, or nil:
// they need root, ip (iproute2) and tc.
func NamespacesAvailable() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	for _, cmd := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Errorf("no %s command (apt-get install -y iproute2): %v", cmd, err)
		}
	}
	return nil
}

// NewNamespace creates a namespace and its veth pair, addresses both ends
// from a free 10.213.0.0/16 /30, and brings them up. On error nothing of it
// is left.
func NewNamespace(ctx context.Context) (_ *Namespace, err error) {
	if err := NamespacesAvailable(); err != nil {
		return nil, err
	}
	RemoveStaleNamespaces(ctx)
	tag := fmt.Sprintf("%x", rand.Uint32())
	// Two storecheck processes (go test runs packages side by side) must
	// not both find the same /30 free: the choice and the address it gives
	// the host's end are made under a lock all of them take.
	unlock, err := lockSubnets(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	host, inside, err := freeSubnet(ctx)
	if err != nil {
		return nil, err
	}
	n := &Namespace{
		name:   fmt.Sprintf("%s%d-%s", namespacePrefix, os.Getpid(), tag),
		hostIf: "sch" + tag, nsIf: "scn" + tag,
		hostAddr: host, nsAddr: inside,
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
		}
	}()
	steps := [][]string{
		{"ip", "netns", "add", n.name},
		{"ip", "link", "add", n.hostIf, "type", "veth", "peer", "name", n.nsIf},
		{"ip", "link", "set", n.nsIf, "netns", n.name},
		{"ip", "addr", "add", n.hostAddr.String() + "/30", "dev", n.hostIf},
		{"ip", "link", "set", n.hostIf, "up"},
		n.inside("ip", "addr", "add", n.nsAddr.String()+"/30", "dev", n.nsIf),
		n.inside("ip", "link", "set", n.nsIf, "up"),
		n.inside("ip", "link", "set", "lo", "up"),
	}
	for _, s := range steps {
		if err := run(ctx, s...); err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", n.name, err)
		}
	}
	return n, nil
}

// Name is the namespace's name.
func (n *Namespace) Name() string { return n.name }

// Addr is the address inside the namespace, where the primary listens.
func (n *Namespace) Addr() string { return n.nsAddr.String() }

// Command runs bin inside the namespace: `ip netns exec` enters it and
// execs bin in the same process, so a signal to the process reaches bin.
func (n *Namespace) Command(bin string, args ...string) *exec.Cmd {
	argv := n.inside(append([]string{bin}, args...)...)
	return exec.Command(argv[0], argv[1:]...)
}

// inside prefixes argv with `ip netns exec NAME`.
func (n *Namespace) inside(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", n.name}, argv...)
}

// Link describes the link's impairment; the zero value is a clean link.
// Delay, Jitter and Loss need the kernel's netem queueing discipline; Rate
// needs tbf. A kernel built without netem (CONFIG_NET_SCH_NETEM) cannot
// delay packets by a fixed time, but a rate limit still slows every
// transfer in proportion to its size.
type Link struct {
	// Delay is added to every round trip, half each way; Jitter spreads
	// it (each way, normally distributed, netem's own).
	Delay, Jitter time.Duration
	// Loss is the fraction of packets dropped each way, 0..1.
	Loss float64
	// Rate caps the link each way, in bits per second (token bucket).
	Rate int64
}

func (l Link) String() string {
	var parts []string
	if l.Delay > 0 || l.Jitter > 0 {
		parts = append(parts, fmt.Sprintf("delay %v±%v", l.Delay, l.Jitter))
	}
	if l.Loss > 0 {
		parts = append(parts, fmt.Sprintf("loss %.1f%%", l.Loss*100))
	}
	if l.Rate > 0 {
		parts = append(parts, fmt.Sprintf("rate %dkbit/s", l.Rate/1000))
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, " ")
}

// netem reports whether l needs netem.
func (l Link) netem() bool { return l.Delay > 0 || l.Jitter > 0 || l.Loss > 0 }

// qdisc is the tc arguments after "root" that impose l.
func (l Link) qdisc() ([]string, error) {
	switch {
	case l.netem() && l.Rate > 0:
		return nil, errors.New("a delay or loss and a rate at once are not supported")
	case l.netem():
		return []string{"netem", "delay", usec(l.Delay / 2), usec(l.Jitter), "loss", strconv.FormatFloat(l.Loss*100, 'f', 3, 64) + "%"}, nil
	case l.Rate > 0:
		// The bucket must hold one tick's worth (HZ as low as 100) and at
		// least a full frame; up to a second of traffic may queue.
		burst := max(l.Rate/8/100, 1600)
		return []string{"tbf", "rate", strconv.FormatInt(l.Rate, 10) + "bit", "burst", strconv.FormatInt(burst, 10), "latency", "1s"}, nil
	}
	return nil, nil
}

// SetLink impairs the link on both ends of the veth pair (or removes the
// impairment, for the zero Link). An error says when this kernel lacks
// the queueing discipline it needs.
func (n *Namespace) SetLink(ctx context.Context, l Link) error {
	if l.Loss < 0 || l.Loss > 1 || l.Delay < 0 || l.Jitter < 0 || l.Rate < 0 {
		return fmt.Errorf("network namespace %s: impossible link %v", n.name, l)
	}
	qdisc, err := l.qdisc()
	if err != nil {
		return fmt.Errorf("network namespace %s: %v: %w", n.name, l, err)
	}
	for _, dev := range []struct {
		prefix []string
		name   string
	}{{nil, n.hostIf}, {n.inside(), n.nsIf}} {
		if qdisc == nil {
			_ = run(ctx, append(dev.prefix, "tc", "qdisc", "del", "dev", dev.name, "root")...) // none there: nothing to remove
			continue
		}
		argv := append(append(dev.prefix, "tc", "qdisc", "replace", "dev", dev.name, "root"), qdisc...)
		if err := run(ctx, argv...); err != nil {
			if strings.Contains(err.Error(), "qdisc kind is unknown") {
				return fmt.Errorf("network namespace %s: this kernel has no %s queueing discipline (CONFIG_NET_SCH_%s): %w", n.name, qdisc[0], strings.ToUpper(qdisc[0]), err)
			}
			return fmt.Errorf("network namespace %s: set %v: %w", n.name, l, err)
		}
	}
	return nil
}

// LinkSupported says whether this kernel can impose l, by trying it on a
// namespace made and removed for the purpose; nil when it can.
func LinkSupported(ctx context.Context, l Link) error {
	n, err := NewNamespace(ctx)
	if err != nil {
		return err
	}
	return errors.Join(n.SetLink(ctx, l), n.Close())
}

func usec(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + "us" }

// Cut takes the host end of the veth pair down: nothing reaches the
// primary, whose process keeps running. Heal brings it back up.
func (n *Namespace) Cut(ctx context.Context) error {
	return run(ctx, "ip", "link", "set", n.hostIf, "down")
}

// linkUpBound bounds how long Heal waits for the veth to carry traffic
// again: carrier comes back within milliseconds on an idle machine, but
// the kernel brings it up asynchronously, and a loaded 2-core CI machine
// was measured answering "down" right after "ip link set up" returned.
const linkUpBound = 10 * time.Second

// Heal ends Cut and returns once the host end of the link reports that it
// carries traffic again (operstate up), or fails after linkUpBound.
func (n *Namespace) Heal(ctx context.Context) error {
	if err := run(ctx, "ip", "link", "set", n.hostIf, "up"); err != nil {
		return err
	}
	return waitOperUp(ctx, n.hostIf, linkUpBound)
}

// waitOperUp polls the interface's operational state until it is up.
func waitOperUp(ctx context.Context, ifname string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	state := ""
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/sys/class/net/" + ifname + "/operstate")
		if err != nil {
			return fmt.Errorf("link %s after heal: %w", ifname, err)
		}
		if state = strings.TrimSpace(string(b)); state == "up" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("link %s still %q %v after heal: the link did not come back", ifname, state, bound)
}

// Close deletes the namespace; its veth end goes with it and takes the
// host's end and every qdisc along. Processes still inside are the
// caller's to stop first.
func (n *Namespace) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if exists(ctx, "link", n.hostIf) {
		errs = append(errs, run(ctx, "ip", "link", "del", n.hostIf))
	}
	if namespaceExists(ctx, n.name) {
		errs = append(errs, run(ctx, "ip", "netns", "del", n.name))
	}
	return errors.Join(errs...)
}

// RemoveStaleNamespaces deletes the namespaces (and their veth pairs) of
// storecheck processes that are gone, e.g. SIGKILLed mid-run.
func RemoveStaleNamespaces(ctx context.Context) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, namespacePrefix)
		if !ok {
			continue
		}
		pidText, tag, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pids.Alive(pid) {
			continue
		}
		_ = run(ctx, "ip", "link", "del", "sch"+tag)
		_ = run(ctx, "ip", "netns", "del", name)
	}
}

// Namespaces lists storecheck's namespaces that exist now (for tests that
// assert nothing is left).
func Namespaces(ctx context.Context) []string {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, _ := strings.Cut(strings.TrimSpace(line), " "); strings.HasPrefix(name, namespacePrefix) {
			names = append(names, name)
		}
	}
	return names
}

// freeSubnet picks a /30 of 10.213.0.0/16 that no interface here uses.
func freeSubnet(ctx context.Context) (host, inside netip.Addr, err error) {
	out, err := exec.CommandContext(ctx, "ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return host, inside, fmt.Errorf("list addresses: %w", err)
	}
	used := string(out)
	for range 64 {
		b := rand.IntN(256)
		c := rand.IntN(64) * 4
		base := netip.AddrFrom4([4]byte{10, 213, byte(b), byte(c)})
		prefix := fmt.Sprintf("10.213.%d.", b)
		clash := false
		for _, field := range strings.Fields(used) {
			if strings.HasPrefix(field, prefix) {
				clash = true
			}
		}
		if !clash {
			return base.Next(), base.Next().Next(), nil
		}
	}
	return host, inside, errors.New("no free /30 in 10.213.0.0/16")
}

// lockSubnets takes the machine-wide lock on choosing a namespace's
// subnet (an flock on a file in the temporary folder), waiting for it no
// longer than ctx allows or 30 seconds.
func lockSubnets(ctx context.Context) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "storecheck-subnets.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("network namespace: subnet lock: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("network namespace: subnet lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("network namespace: another storecheck process held the subnet lock too long: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func exists(ctx context.Context, kind, name string) bool {
	return exec.CommandContext(ctx, "ip", kind, "show", name).Run() == nil
}

func namespaceExists(ctx context.Context, name string) bool {
	for _, n := range Namespaces(ctx) {
		if n == name {
			return true
		}
	}
	return false
}

// run runs argv and folds its output into the error.
func run(ctx context.Context, argv ...string) error {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
