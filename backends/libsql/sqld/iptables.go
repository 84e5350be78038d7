package sqld

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/storecheck/storecheck/backends/internal/pids"
)

// DropRule is an iptables rule that drops packets to one loopback port:
// a client whose proxy listens there is cut from the primary at the packet
// level (its connections hang rather than fail). Its comment names the
// process that added it (RuleComment), so that tests count only their own
// rules and a later run removes what a killed one left (RemoveStaleRules).
type DropRule struct {
	port  int
	added bool
}

// NewDropRule returns the rule for port; it is not added yet.
func NewDropRule(port int) *DropRule { return &DropRule{port: port} }

// RuleComment is the comment on the rules this process adds.
func RuleComment() string { return fmt.Sprintf("%s%d", rulePrefix, os.Getpid()) }

// rulePrefix starts the comment of every rule storecheck adds.
const rulePrefix = "storecheck-"

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
		"-m", "comment", "--comment", RuleComment()}
}

// Add inserts the rule.
func (r *DropRule) Add(ctx context.Context) error {
	if r.added {
		return nil
	}
	RemoveStaleRules(ctx)
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

// Rules lists the INPUT rules storecheck's processes added, as iptables -S
// prints them.
func Rules(ctx context.Context) []string {
	out, err := exec.CommandContext(ctx, "iptables", "-w", "-S", "INPUT").Output()
	if err != nil {
		return nil
	}
	var rules []string
	for _, r := range strings.Split(string(out), "\n") {
		if strings.Contains(r, "--comment "+rulePrefix) {
			rules = append(rules, r)
		}
	}
	return rules
}

// RemoveStaleRules deletes the rules of storecheck processes that are
// gone, e.g. SIGKILLed while a client was cut.
func RemoveStaleRules(ctx context.Context) {
	if IptablesAvailable() != nil {
		return
	}
	for _, r := range Rules(ctx) {
		fields := strings.Fields(r)
		if len(fields) < 2 || fields[0] != "-A" {
			continue
		}
		var pid int
		for i, f := range fields {
			if f == "--comment" && i+1 < len(fields) {
				pid, _ = strconv.Atoi(strings.TrimPrefix(fields[i+1], rulePrefix))
			}
		}
		if pid <= 0 || pids.Alive(pid) {
			continue
		}
		_ = iptables(ctx, append([]string{"-D"}, fields[1:]...))
	}
}
