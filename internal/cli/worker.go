package cli

import (
	"context"

	"github.com/storecheck/storecheck/procfault"
)

// workerCommand is the hidden `storecheck __worker CONFIG`: the process that
// the crash-recovery and writer-stall scenarios start, SIGKILL and SIGSTOP
// (see package procfault). Its parent writes CONFIG; nobody types it.
func workerCommand(ctx context.Context, e *env, args []string) (int, error) {
	return procfault.RunWorker(ctx, args, e.stderr), nil
}
