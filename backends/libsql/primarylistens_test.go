//go:build cgo

package libsql

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// A primary given by URL where nothing listens is named as such, not as
// the replica's "channel closed" through the proxy; one that listens
// passes, whatever it answers.
func TestPrimaryListens(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	err = primaryListens(context.Background(), "http://user:pw@"+closed)
	if err == nil || !strings.Contains(err.Error(), "nothing listens at "+closed) || !strings.Contains(err.Error(), "sqld") {
		t.Errorf("a closed primary: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "pw") {
		t.Errorf("the error shows the URL's password: %v", err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if err := primaryListens(context.Background(), srv.URL); err != nil {
		t.Errorf("a listening primary: %v", err)
	}
	if err := primaryListens(context.Background(), "not a url at all"); err != nil {
		t.Errorf("a URL without a host is left to the connection: %v", err)
	}
}

// A primary that accepts connections and never answers (frozen, wedged)
// holds no open for ever: the schema is created under the primary's guard,
// so an interrupt ends the open within the guard's grace, with an error,
// instead of when the server lets go of its sockets.
func TestOpenOfASilentPrimaryEndsWithItsContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c // read nothing, answer nothing
		}
	}()
	// Let go after a while, so that an open that ignores its context
	// ends (in a failure of this test) rather than hanging it.
	release := time.AfterFunc(20*time.Second, func() {
		l.Close()
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	defer release.Stop()
	defer l.Close()

	target, err := ParseReplicaURL(filepath.Join(t.TempDir(), "r.db") + "?primary=http://" + l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel) // the interrupt
	start := time.Now()
	c, err := OpenReplicaCluster(ctx, target, model.DefaultConfig(), ClusterOptions{Primary: target.Primary, Seed: 1})
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("a primary that never answers was opened")
	}
	if took > time.Second+callGrace+2*time.Second {
		t.Errorf("the open ended %v after it started, long after its context (1s): %v", took.Round(time.Millisecond), err)
	}
}
