package rqlite

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/internal/listening"

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
// connection is an error naming them within listening.RefusedWait, not after the
// 30 s connect timeout.
func TestOpenURLSaysNothingListens(t *testing.T) {
	addr := closedPort(t)
	start := time.Now()
	_, err := OpenURL(context.Background(), "//"+addr, model.DefaultConfig())
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "nothing listens at "+addr) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("OpenURL on a closed port: %v", err)
	}
	if took > listening.RefusedWait+2*time.Second {
		t.Errorf("OpenURL took %v to say nothing listens; listening.RefusedWait is %v", took, listening.RefusedWait)
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
