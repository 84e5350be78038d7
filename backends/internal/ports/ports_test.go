package ports

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	if low-floor < minSpan {
		t.Skipf("NOT RUN: the ephemeral range starts at %d, too low to pick below it", low)
	}
	ports, err := Free(16)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < floor || p >= low || seen[p] {
			t.Fatalf("port %d: want distinct ports in %d-%d (got %v)", p, floor, low-1, ports)
		}
		seen[p] = true
		// Free when returned: a server can bind it.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d returned free, but: %v", p, err)
		}
		l.Close()
	}
}

// TestPickSkipsATakenPort: a port someone listens on is never returned,
// and a span with no free port is an error that says so.
func TestPickSkipsATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	p := taken.Addr().(*net.TCPAddr).Port
	if l, err := pickIn(p, p+1); err == nil {
		l.Close()
		t.Fatalf("pickIn returned port %d, which is taken", p)
	} else if !strings.Contains(err.Error(), "all taken") {
		t.Fatalf("error %q does not say the ports were taken", err)
	}
	taken.Close()
	l, err := pickIn(p, p+1)
	if err != nil {
		t.Fatalf("port %d, free again: %v", p, err)
	}
	l.Close()
}

func TestParseRangeLow(t *testing.T) {
	for in, want := range map[string]int{"32768\t60999\n": 32768, "1024 65535": 1024} {
		if got, err := parseRangeLow(in); err != nil || got != want {
			t.Errorf("%q: got %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "32768", "a b"} {
		if _, err := parseRangeLow(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
