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
