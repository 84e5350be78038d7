// Command go is the reference adapter in Go: any of storecheck's own
// backends behind the adapter protocol (docs/ADAPTER.md), answering on stdin
// and stdout. It shows that the protocol adds no behaviour: through it a
// backend gives the same verdicts and results as in process.
//
//	storecheck run --backend 'exec:go run ./adapters/go --backend sqlite:{dir}/store.db'
//
// In --backend, {dir} stands for the directory the harness made for the
// store (hello's store.dir). A backend that cannot be shared between
// processes (memory:, sqlite::memory:) is served by one process.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/adapter/serve"
	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/model"
)

func main() {
	os.Exit(adapterMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// adapterMain parses args and serves until shutdown; it returns the exit
// status.
func adapterMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("adapters/go", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", "sqlite:{dir}/store.db", "backend URL to serve; {dir} is the harness's store directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *backend, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "adapters/go: %v\n", err)
		return 1
	}
	return 0
}

// run serves the backend on stdin and stdout until shutdown.
func run(ctx context.Context, backend string, stdin io.Reader, stdout io.Writer) error {
	if err := backends.Validate(strings.ReplaceAll(backend, "{dir}", os.TempDir())); err != nil {
		return err
	}
	open := func(ctx context.Context, h wire.Hello) (model.Store, error) {
		return backends.Open(ctx, strings.ReplaceAll(backend, "{dir}", h.Store.Dir), model.Config{TraceMax: h.TraceMax})
	}
	opt := serve.Options{Name: "go " + backend, MaxProcesses: maxProcesses(backend)}
	return serve.Serve(ctx, stdin, stdout, open, opt)
}

// maxProcesses is 1 for a backend whose data lives in one process's memory,
// 0 (no limit) otherwise.
func maxProcesses(backend string) int {
	t, err := backends.Resolve(strings.ReplaceAll(backend, "{dir}", os.TempDir()))
	if err == nil && t.Has(backends.InMemory) {
		return 1
	}
	return 0
}
