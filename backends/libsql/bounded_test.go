//go:build cgo

package libsql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A call whose caller set no deadline is still bounded: past the guard's
// bound its connections are dropped and the caller gets an error saying so;
// a call that answers in time returns its answer.
func TestCallWithoutDeadlineIsBounded(t *testing.T) {
	release := make(chan struct{})
	g := &guard{name: "replica r0", maxCall: 100 * time.Millisecond, drop: func() { close(release) }}
	v, err := guarded(context.Background(), g, "load", func() (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Fatalf("a call that answered: %v, %v", v, err)
	}
	_, err = guarded(context.Background(), g, "delegated commit", func() (int, error) {
		<-release // a wedged primary, until the connections are dropped
		return 0, errors.New("connection reset")
	})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer in 100ms") || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("a call held by a wedged primary without a deadline: %v", err)
	}
	t.Log(err)
}
