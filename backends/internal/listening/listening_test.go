package listening

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
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
	if err := Await(context.Background(), []string{closedPort(t), addr}, 3*time.Second, "the server"); err != nil {
		t.Errorf("a node listening after 0.6 s: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	if err := Await(ctx, []string{closedPort(t)}, time.Minute, "the server"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// TestAwaitSaysWhoIsMissing: the error names the addresses and the server.
func TestAwaitSaysWhoIsMissing(t *testing.T) {
	a, b := closedPort(t), closedPort(t)
	err := Await(context.Background(), []string{a, b}, 300*time.Millisecond, "sqld")
	if err == nil || !strings.Contains(err.Error(), "nothing listens at "+a+", "+b) || !strings.Contains(err.Error(), "is sqld running there?") {
		t.Errorf("Await on two closed ports: %v", err)
	}
}
