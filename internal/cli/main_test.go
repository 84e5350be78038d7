package cli

import (
	"context"
	"os"
	"testing"

	"github.com/storecheck/storecheck/procfault"
)

// TestMain lets this test binary act as the storecheck binary's worker, so
// that the crash-recovery and writer-stall scenarios can run from these
// tests: it runs the hidden worker command line through Main, as the
// storecheck binary would.
func TestMain(m *testing.M) {
	if args, ok := procfault.WorkerArgs(); ok {
		os.Exit(Main(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
