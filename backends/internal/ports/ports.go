// Package ports picks the loopback TCP ports of the servers a run starts.
//
// A port the kernel hands out for "127.0.0.1:0" comes from its ephemeral
// range, the same range it draws the source port of every outgoing
// connection from. A server killed by a fault frees its port until it is
// started again on it; in that time any new connection on the machine — one
// of the run's own clients reconnecting to another node, say — may be given
// that port as its source, and the restarted server then cannot bind it. So
// ports are picked below the ephemeral range, where the kernel never assigns
// one by itself, and checked free by listening on them.
package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// floor is the lowest port picked: above the well-known and most
// registered service ports.
const floor = 10000

// minSpan is the fewest ports below the ephemeral range worth picking
// from; with fewer, ports come from the kernel (":0") as a last resort.
const minSpan = 2000

// attempts bounds the candidates tried per port.
const attempts = 200

// Free returns n distinct loopback ports nobody listens on now, each below
// the kernel's ephemeral range. They are held while being picked and free
// when returned; a program that binds one before the server does makes the
// server's start fail with a clear error.
func Free(n int) ([]int, error) {
	lo, hi := floor, ephemeralLow()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := pick(lo, hi)
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// pick listens on a free port in [lo, hi), or on a kernel-chosen one when
// the span is too small to pick from.
func pick(lo, hi int) (net.Listener, error) {
	if hi-lo < minSpan {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		return l, nil
	}
	return pickIn(lo, hi)
}

// pickIn listens on a random free port in [lo, hi), trying at most
// attempts of them.
func pickIn(lo, hi int) (net.Listener, error) {
	var last error
	for range attempts {
		port := lo + rand.IntN(hi-lo)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			return l, nil
		}
		last = err
	}
	return nil, fmt.Errorf("find a free port in %d-%d: %d tried, all taken: %w", lo, hi-1, attempts, last)
}

// ephemeralLow reads the start of the kernel's ephemeral port range; 32768
// (Linux's default) when it cannot be read.
func ephemeralLow() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	low, err := parseRangeLow(string(b))
	if err != nil {
		return linuxDefault
	}
	return low
}

// parseRangeLow reads the first of the two numbers of ip_local_port_range.
func parseRangeLow(s string) (int, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, errors.New("ip_local_port_range: want two numbers")
	}
	return strconv.Atoi(f[0])
}
