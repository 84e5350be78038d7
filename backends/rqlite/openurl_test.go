package rqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/internal/listening"
	"github.com/storecheck/storecheck/model"
)

// TestOpenURLSaysNothingListens: an rqlite:// URL whose nodes refuse every
// connection is an error naming them within listening.RefusedWait, not after the
// 30 s connect timeout.
func TestOpenURLSaysNothingListens(t *testing.T) {
	addr := closedAddr(t)
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

// TestParseURLRefusesAPortNoNodeHas: a node address whose port is not a
// TCP port (1..65535) is bad usage at once, not a 30 s wait for a leader
// that ends NOT RUN ("no leader accepted it within 30s").
func TestParseURLRefusesAPortNoNodeHas(t *testing.T) {
	for _, u := range []string{"//127.0.0.1:99999", "//127.0.0.1:0", "//127.0.0.1:http", "//127.0.0.1:-1", "//127.0.0.1:4001,127.0.0.1:70000"} {
		if _, err := ParseURL(u); err == nil || !strings.Contains(err.Error(), "port") {
			t.Errorf("ParseURL(%q) = %v, want the port refused", u, err)
		}
	}
	if _, err := ParseURL("//127.0.0.1:4001,[::1]:4002,localhost:65535"); err != nil {
		t.Errorf("good addresses refused: %v", err)
	}
}
