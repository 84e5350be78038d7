package realsqld_test

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/scenarios"
	"github.com/storecheck/storecheck/worker"
)

// TestMain lets this test binary act as the worker processes the replica
// scenarios start (a replica client's process, killed mid-sync).
func TestMain(m *testing.M) {
	worker.Main(scenarios.WorkerRoles())
	os.Exit(m.Run())
}
