package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChainOwner(t *testing.T) {
	f := newFirewall()
	if len(f.chain) > 28 {
		t.Errorf("chain name %q is longer than iptables takes (28)", f.chain)
	}
	for chain, want := range map[string]int{
		f.chain:                     os.Getpid(),
		"storecheck-4194304-0a1b2c": 4194304,
		"storecheck-0a1b2c3d":       0, // before chains named their process: left alone
		"storecheck-12-0a1b2c3d":    0,
		"other-12-0a1b2c":           0,
		"storecheck--0a1b2c":        0,
		"storecheck-x12-0a1b2c":     0,
	} {
		got, ok := chainOwner(chain)
		if ok != (want > 0) || got != want {
			t.Errorf("chainOwner(%q) = %d, %v; want %d", chain, got, ok, want)
		}
	}
}

// The chain a SIGKILLed run left (its rules and the jump to it from
// OUTPUT) is removed by the next run's first isolation; a live run's chain
// is left alone.
func TestStaleChainsAreRemoved(t *testing.T) {
	if err := FirewallAvailable(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s%d-0a1b2c", ChainPrefix, dead.Process.Pid)
	// A chain of a process that runs: this test's own, so that two runs of the test at once
	// (two checkouts' suites on one machine) do not make the same chain.
	live := fmt.Sprintf("%s%d-0a1b2c", ChainPrefix, os.Getpid())
	for _, c := range []string{stale, live} {
		left := &firewall{chain: c, rules: map[string][][]string{}}
		t.Cleanup(func() { left.created = true; left.close(context.Background()) })
		if err := left.ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := iptables(ctx, "-A", c, "-o", "lo", "-p", "tcp", "--dport", "1", "-j", "DROP"); err != nil {
			t.Fatal(err)
		}
	}
	f := newFirewall()
	t.Cleanup(func() { f.close(context.Background()) })
	if err := f.ensure(ctx); err != nil {
		t.Fatal(err)
	}
	chains, err := LeftoverChains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(chains, stale) || !slices.Contains(chains, live) || !slices.Contains(chains, f.chain) {
		t.Errorf("chains after the next run's isolation: %v; want %s gone, %s and %s there", chains, stale, live, f.chain)
	}
	out, err := exec.CommandContext(ctx, "iptables", "-w", "5", "-S", "OUTPUT").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), stale) {
		t.Errorf("the jump to %s is still in OUTPUT:\n%s", stale, out)
	}
}

// fakeIptables puts an iptables on PATH that lists chains (-S) and fails
// -F and -X of the chain gone, as the real one does once another process
// removed it; every call is logged in the returned file.
func fakeIptables(t *testing.T, chains []string, gone string) string {
	t.Helper()
	dir := t.TempDir()
	log := dir + "/calls"
	var list strings.Builder
	for _, c := range chains {
		list.WriteString("echo '-N " + c + "'\n")
	}
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n" +
		"case \"$*\" in\n" +
		"*-S*) echo '-P OUTPUT ACCEPT'\n" + list.String() + ";;\n" +
		"*\"-F " + gone + "\"*|*\"-X " + gone + "\"*|*\"-D OUTPUT -j " + gone + "\"*) echo 'iptables: No chain/target/match by that name.' >&2; exit 1;;\n" +
		"esac\nexit 0\n"
	if err := os.WriteFile(dir+"/iptables", []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return log
}

// A leftover chain of a dead run that another run removed between this
// run's listing and its own removal (two runs' first isolations at once
// after a SIGKILLed one), or that cannot be removed, is not this run's
// failure: its isolation goes on, its own chain made.
func TestStaleChainSweepDoesNotFailIsolation(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s%d-0a1b2c", ChainPrefix, dead.Process.Pid)
	log := fakeIptables(t, []string{stale}, stale)
	f := newFirewall()
	if err := f.ensure(context.Background()); err != nil {
		t.Fatalf("the isolation failed on another run's leftover: %v", err)
	}
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "-N "+f.chain) || !strings.Contains(string(calls), "-I OUTPUT 1 -j "+f.chain) {
		t.Errorf("the run's own chain was not made; iptables calls:\n%s", calls)
	}
}

// Packet loss is a rule of the same shape as an isolation's, with the
// statistic match at the fraction asked for: at 1 it drops every packet to
// the node's Raft port (a connection there cannot open), at 0.25 the rules
// carry that probability, a second fault on the node is refused while the
// first holds, rejoin removes the rules, and a fraction outside (0, 1]
// makes none.
func TestPacketLossRules(t *testing.T) {
	if err := FirewallAvailable(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dial := func() error {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 500*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err
	}
	f := newFirewall()
	t.Cleanup(func() { f.close(context.Background()) })
	const uid = 4242 // no process of this test runs as it
	for _, bad := range []float64{0, -1, 1.5} {
		if err := f.lose(ctx, "n1", uid, 1, port, bad); err == nil {
			t.Errorf("a loss of %v was set up", bad)
		}
	}
	if err := f.lose(ctx, "n1", uid, 1, port, 1); err != nil {
		if strings.Contains(err.Error(), "statistic") {
			t.Skipf("NOT RUN: this kernel or iptables has no statistic match: %v", err)
		}
		t.Fatal(err)
	}
	if err := dial(); err == nil {
		t.Error("a connection to the node's Raft port opened through a loss of 1")
	}
	if err := f.isolate(ctx, "n1", uid, 1, port); err == nil {
		t.Error("a node losing packets was isolated on top")
	}
	if err := f.rejoin(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := dial(); err != nil {
		t.Errorf("after rejoin: %v", err)
	}
	if err := f.lose(ctx, "n2", uid, 1, port, 0.25); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "iptables", "-w", "5", "-S", f.chain).Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "--probability 0.25"); n != 2 {
		t.Errorf("%d rules at probability 0.25, want 2:\n%s", n, out)
	}
	if err := f.rejoin(ctx, "n2"); err != nil {
		t.Fatal(err)
	}
	out, _ = exec.CommandContext(ctx, "iptables", "-w", "5", "-S", f.chain).Output()
	if strings.Contains(string(out), "DROP") {
		t.Errorf("rules left after rejoin:\n%s", out)
	}
}
