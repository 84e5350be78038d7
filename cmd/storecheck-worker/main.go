// Command storecheck-worker is storecheck built for the worker processes
// its scenarios start, SIGKILL and SIGSTOP (package worker): crash-recovery
// and power-loss start one for every cycle, about 90 in an embedded
// qualification. It holds the worker roles and nothing else — no property
// suites, reports or commands — and make build builds it with the tag
// storecheck_nocontainers, which leaves container support out, so that it
// starts in a fraction of storecheck's time (docs/PERFORMANCE.md).
// storecheck starts its workers from it when both come from one clean
// commit (worker.Self); it is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/storecheck/storecheck/internal/procgc"
	"github.com/storecheck/storecheck/internal/workers"
	"github.com/storecheck/storecheck/worker"
)

func main() {
	procgc.ForScenarios()
	worker.Main(workers.Roles())
	fmt.Fprintf(os.Stderr, "storecheck-worker: runs the worker processes storecheck's scenarios start (storecheck-worker %s ROLE), not by hand\n", worker.Arg)
	os.Exit(2)
}
