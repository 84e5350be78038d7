// Package listening tells a server address nothing listens on from a
// server that is slow to answer, so that a run against the wrong port says
// so at once instead of waiting out its connect timeout.
package listening

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// RefusedWait is how long a backend lets every address of its server
// refuse connections before it says nothing listens there, instead of
// waiting out its connect timeout: a server started beside the run
// (rqlited &, sqld &) listens within it.
const RefusedWait = 3 * time.Second

// Await returns once some address (host:port) accepts a TCP connection,
// or one fails in a way other than a refused connection (a timeout, say:
// the caller's own retries then say what is wrong). It fails when every
// address has refused for wait. what names the server in the error ("is
// rqlited running there?").
func Await(ctx context.Context, addrs []string, wait time.Duration, what string) error {
	deadline := time.Now().Add(wait)
	var d net.Dialer
	for {
		var last error
		for _, n := range addrs {
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			c, err := d.DialContext(dctx, "tcp", n)
			cancel()
			if err == nil {
				c.Close()
				return nil
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				if ctx.Err() != nil {
					return fmt.Errorf("waiting for %s to listen: %w", strings.Join(addrs, ", "), ctx.Err())
				}
				return nil
			}
			last = err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("nothing listens at %s (connection refused for %v; is %s running there?): %w", strings.Join(addrs, ", "), wait, what, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to listen: %w", strings.Join(addrs, ", "), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
