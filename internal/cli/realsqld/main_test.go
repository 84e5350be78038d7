package realsqld_test

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/internal/workers"
	"github.com/storecheck/storecheck/worker"
)

// TestMain lets this test binary act as the worker processes the replica
// scenarios start (a replica client's process, killed mid-sync).
func TestMain(m *testing.M) {
	worker.Main(workers.Roles())
	os.Exit(m.Run())
}
