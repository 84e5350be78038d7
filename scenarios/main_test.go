package scenarios

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/internal/workers"
	"github.com/storecheck/storecheck/worker"
)

// TestMain lets this test binary be the worker processes its scenarios
// start, as the storecheck binary's main does.
func TestMain(m *testing.M) {
	worker.Main(workers.Roles())
	os.Exit(m.Run())
}
