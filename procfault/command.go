package procfault

import (
	"context"
	"fmt"

	"github.com/storecheck/storecheck/worker"
)

// Command is how the parent starts its workers (package worker).
type Command = worker.Command

// SelfCommand re-executes the running binary as a worker (worker.Self). A
// test binary acts as one only if its TestMain calls worker.Main with
// Roles.
func SelfCommand() (Command, error) {
	c, err := worker.Self()
	if err != nil {
		return Command{}, notRun("%v", err)
	}
	return c, nil
}

// Roles are the worker roles of the crash-recovery and writer-stall
// scenarios, for worker.Main.
func Roles() worker.Roles {
	return worker.Roles{roleCrash: runRole, roleStall: runRole}
}

// runRole is a worker of either mode; the configuration says which.
func runRole(ctx context.Context, c *worker.Child) error {
	var cfg workerConfig
	if err := c.Config(&cfg); err != nil {
		return err
	}
	return runWorker(ctx, cfg, c)
}

// usage is what a worker says of a configuration it cannot use.
func usage(err error) error {
	return fmt.Errorf("%w (workers are started by the crash-recovery and writer-stall scenarios, not by hand)", err)
}
