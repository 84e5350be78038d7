package mutantrun

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/internal/workers"
	"github.com/storecheck/storecheck/worker"
)

// TestMain lets this test binary be the worker processes the power-loss
// scenario starts, as the storecheck binary's main does.
func TestMain(m *testing.M) {
	worker.Main(workers.Roles())
	os.Exit(m.Run())
}
