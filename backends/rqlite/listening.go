package rqlite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// refusedWait is how long OpenURL lets every node refuse connections
// before it says nothing listens there, instead of waiting out the connect
// timeout for a leader no server can elect: a server started beside the
// run (rqlited &) listens within it.
const refusedWait = 3 * time.Second

// awaitListening returns once some node accepts a TCP connection, or a
// node fails in a way other than a refused connection (a timeout, say: the
// schema's retries then say what is wrong). It fails when every node has
// refused for wait.
func awaitListening(ctx context.Context, nodes []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var d net.Dialer
	for {
		var last error
		for _, n := range nodes {
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			c, err := d.DialContext(dctx, "tcp", n)
			cancel()
			if err == nil {
				c.Close()
				return nil
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				if ctx.Err() != nil {
					return fmt.Errorf("waiting for %s to listen: %w", strings.Join(nodes, ", "), ctx.Err())
				}
				return nil
			}
			last = err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("nothing listens at %s (connection refused for %v; is rqlited running there?): %w", strings.Join(nodes, ", "), wait, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to listen: %w", strings.Join(nodes, ", "), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
