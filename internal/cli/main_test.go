package cli

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/scenarios"
	"github.com/storecheck/storecheck/worker"
)

// TestMain lets this test binary act as the storecheck binary's worker
// processes, so that the scenarios that start them can run from these
// tests, as the storecheck binary's main does.
func TestMain(m *testing.M) {
	worker.Main(scenarios.WorkerRoles())
	os.Exit(m.Run())
}
