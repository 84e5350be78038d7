package cli

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/internal/workers"
	"github.com/storecheck/storecheck/worker"
)

// TestMain lets this test binary act as the storecheck binary's worker
// processes, so that the scenarios that start them can run from these
// tests, as the storecheck binary's main does.
func TestMain(m *testing.M) {
	worker.Main(workers.Roles())
	os.Exit(m.Run())
}
