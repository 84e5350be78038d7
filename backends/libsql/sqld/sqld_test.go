package sqld

import (
	"context"
	"errors"
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
	for i, a := range os.Args {
		if a == "--http-listen-addr" && i+1 < len(os.Args) {
			http.HandleFunc("/health", func(http.ResponseWriter, *http.Request) {})
			_ = http.ListenAndServe(os.Args[i+1], nil)
		}
	}
	os.Exit(3)
}

func healthy(url string) bool {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get(url + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestProcessLifecycle starts, kills, restarts and closes a (fake) sqld
// process, on one address throughout.
func TestProcessLifecycle(t *testing.T) {
	t.Setenv(fakeEnv, "1")
	p, err := NewProcess(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := p.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			s.Close()
		}
	})
	if !healthy(s.URL()) {
		t.Fatalf("%s is not healthy after Start", s.URL())
	}
	if err := s.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if healthy(s.URL()) {
		t.Fatalf("%s still answers after Kill", s.URL())
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !healthy(s.URL()) {
		t.Fatalf("%s is not healthy after Restart", s.URL())
	}
	pid := s.(*procServer).cmd.Process.Pid
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if healthy(s.URL()) {
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
	s, err := p.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("%s: %v", p.Name(), err)
	}
	if !healthy(s.URL()) {
		t.Errorf("%s is not healthy", p.Name())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
