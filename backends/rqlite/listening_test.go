package rqlite

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/model"
)

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestOpenURLSaysNothingListens: an rqlite:// URL whose nodes refuse every
// connection is an error naming them within refusedWait, not after the
// 30 s connect timeout.
func TestOpenURLSaysNothingListens(t *testing.T) {
	addr := closedPort(t)
	start := time.Now()
	_, err := OpenURL(context.Background(), "//"+addr, model.DefaultConfig())
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "nothing listens at "+addr) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("OpenURL on a closed port: %v", err)
	}
	if took > refusedWait+2*time.Second {
		t.Errorf("OpenURL took %v to say nothing listens; refusedWait is %v", took, refusedWait)
	}
	// A shorter connect timeout is the shorter wait.
	start = time.Now()
	if _, err := OpenURL(context.Background(), "//"+addr+"?connect_timeout=500ms", model.DefaultConfig()); err == nil {
		t.Fatal("OpenURL on a closed port succeeded")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("connect_timeout=500ms took %v", took)
	}
}

// TestAwaitListening: a node that starts listening within the wait is
// waited for; a cancelled context ends the wait.
func TestAwaitListening(t *testing.T) {
	addr := closedPort(t)
	go func() {
		time.Sleep(600 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return // taken meanwhile; the wait then fails and says so
		}
		time.Sleep(3 * time.Second)
		l.Close()
	}()
	if err := awaitListening(context.Background(), []string{closedPort(t), addr}, 3*time.Second); err != nil {
		t.Errorf("a node listening after 0.6 s: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	if err := awaitListening(ctx, []string{closedPort(t)}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}
