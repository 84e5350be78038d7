package sqld

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// DropRule is an iptables rule that drops packets to one loopback port:
// a client whose proxy listens there is cut from the primary at the packet
// level (its connections hang rather than fail).
type DropRule struct {
	port  int
	added bool
}

// NewDropRule returns the rule for port; it is not added yet.
func NewDropRule(port int) *DropRule { return &DropRule{port: port} }

// IptablesAvailable says why DropRule cannot work here, or nil: it needs
// root and the iptables command.
func IptablesAvailable() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("iptables rules need root")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("no iptables command (apt-get install -y iptables): %v", err)
	}
	return nil
}

// spec is the rule: INPUT on lo, TCP to the port, dropped.
func (r *DropRule) spec() []string {
	return []string{"INPUT", "-i", "lo", "-p", "tcp", "--dport", strconv.Itoa(r.port), "-j", "DROP",
		"-m", "comment", "--comment", "storecheck"}
}

// Add inserts the rule.
func (r *DropRule) Add(ctx context.Context) error {
	if r.added {
		return nil
	}
	if err := iptables(ctx, append([]string{"-I"}, r.spec()...)); err != nil {
		return err
	}
	r.added = true
	return nil
}

// Remove deletes the rule if Add inserted it.
func (r *DropRule) Remove(ctx context.Context) error {
	if !r.added {
		return nil
	}
	if err := iptables(ctx, append([]string{"-D"}, r.spec()...)); err != nil {
		return err
	}
	r.added = false
	return nil
}

func iptables(ctx context.Context, args []string) error {
	out, err := exec.CommandContext(ctx, "iptables", append([]string{"-w"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
