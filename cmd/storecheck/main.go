// Command storecheck proves durable execution stores keep their contract:
// property-based sequences against a reference model, linearizability of
// concurrent histories, fault injection, and qualification reports.
//
// Run 'storecheck help' for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/storecheck/storecheck/internal/cli"
	"github.com/storecheck/storecheck/scenarios"
	"github.com/storecheck/storecheck/worker"
)

func main() {
	// A worker process a scenario started plays its role and exits.
	worker.Main(scenarios.WorkerRoles())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
