package cli

import (
	"context"

	"github.com/storecheck/storecheck/worker"
)

// workerCommand is the hidden `storecheck __worker ROLE`. A process the
// scenarios start as a worker never gets here (main hands it to
// worker.Main first); typed by hand, it says so.
func workerCommand(context.Context, *env, []string) (int, error) {
	return ExitUsage, usagef("%s is the worker processes' command, started by scenarios, not by hand", worker.Arg)
}
