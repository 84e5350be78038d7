package wait

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("a live context: Sleep said it ended")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Error("an ended context: Sleep said it was live")
	}
	if time.Since(start) > time.Minute {
		t.Error("Sleep waited out its duration on an ended context")
	}
}
