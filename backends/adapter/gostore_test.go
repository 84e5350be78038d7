package adapter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storecheck/storecheck/backends/internal/storetest"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/workload"
)

// openFull opens argv as an adapter whose store has every optional
// operation, closed (and its processes checked reaped) at the end.
func openFull(t *testing.T, argv []string) storetest.Full {
	t.Helper()
	s, err := Open(context.Background(), argv, model.Config{TraceMax: 3}, quiet(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		noChildren(t)
	})
	full, ok := s.(storetest.Full)
	if !ok {
		t.Fatalf("%T lacks dump, reset or set_trace_max", s)
	}
	return full
}

// The Go adapter (the SQLite backend behind serve, in other processes) is
// the protocol's control: anything it gets wrong that the backend in
// process gets right is the protocol's fault.

func TestGoAdapterMatchesReference(t *testing.T) {
	storetest.MatchesReference(t, openFull(t, self("go-sqlite")))
}

// TestGoAdapterConcurrentCommits: writers in different adapter processes
// racing on one database file: exactly one wins each round.
func TestGoAdapterConcurrentCommits(t *testing.T) {
	storetest.ConcurrentCommits(t, openFull(t, self("go-sqlite")), 6)
}

// TestGoAdapterSameAsInProcess: the same seed gives the same verdict, the
// same operation sequence (digest) and the same number of operations
// through the protocol as in process; every one of those operations gave
// the reference model's result on both sides, or the check would fail.
func TestGoAdapterSameAsInProcess(t *testing.T) {
	ctx := context.Background()
	cfg := conformance.CheckConfig{Seed: 7, Checks: 25}
	dir := t.TempDir()
	inProcess, err := conformance.Check(ctx, func(ctx context.Context, c model.Config) (model.Store, error) {
		return sqlite.Open(ctx, filepath.Join(dir, "in-process.db"), c)
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	opt := quiet(t)
	viaAdapter, err := conformance.Check(ctx, func(ctx context.Context, c model.Config) (model.Store, error) {
		return Open(ctx, self("go-sqlite"), c, opt)
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !inProcess.Passed || !viaAdapter.Passed {
		t.Fatalf("passed: in process %v, through the adapter %v: %s %s", inProcess.Passed, viaAdapter.Passed, inProcess.Failure, viaAdapter.Failure)
	}
	if inProcess.Digest != viaAdapter.Digest || inProcess.Ops != viaAdapter.Ops || inProcess.Cases != viaAdapter.Cases {
		t.Errorf("in process: digest %s, %d ops, %d cases; through the adapter: digest %s, %d ops, %d cases",
			inProcess.Digest, inProcess.Ops, inProcess.Cases, viaAdapter.Digest, viaAdapter.Ops, viaAdapter.Cases)
	}
	noChildren(t)
}

// TestGoAdapterWorkload: the concurrent workload through a pool of Go
// adapter processes is linearizable, as in process.
func TestGoAdapterWorkload(t *testing.T) {
	res, err := workload.Run(context.Background(), openFull(t, self("go-sqlite")),
		workload.Config{Clients: 4, Executions: 3, Ops: 400, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Ok {
		t.Fatalf("verdict %s: %v", res.Verdict, res.Err)
	}
}
