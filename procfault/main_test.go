package procfault

import (
	"os"
	"testing"

	"github.com/storecheck/storecheck/worker"
)

// TestMain lets the test binary act as the worker: the scenarios start
// workers by re-executing the running binary (SelfCommand), which here is
// this test binary. It can also act as a parent that a test kills (see
// TestWorkerDiesWithItsParent).
func TestMain(m *testing.M) {
	worker.Main(Roles())
	if dir := os.Getenv(orphanEnv); dir != "" {
		os.Exit(runOrphanParent(dir))
	}
	os.Exit(m.Run())
}
