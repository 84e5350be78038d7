//go:build unix

package adapter

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/backends/internal/storetest"
	"github.com/storecheck/storecheck/conformance"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/workload"
)

// pythonScript is the reference Python adapter, from this package's folder.
var pythonScript = filepath.Join("..", "..", "adapters", "python", "sqlite_store.py")

// interpreter finds python3 once, resolved to the real binary: version
// managers put a slow shell script on PATH, which would be paid for every
// adapter process.
var interpreter = sync.OnceValues(func() (string, error) {
	path, err := exec.LookPath("python3")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(path, "-c", "import sys; print(sys.executable)").Output()
	if real := strings.TrimSpace(string(out)); err == nil && real != "" {
		return real, nil
	}
	return path, nil
})

// python is the command line of the Python adapter with args, or skips the
// test when there is no python3.
func python(t *testing.T, args ...string) []string {
	t.Helper()
	path, err := interpreter()
	if err != nil {
		t.Skip("NOT RUN: python3 not found")
	}
	return append([]string{path, pythonScript}, args...)
}

func TestPythonMatchesReference(t *testing.T) {
	storetest.MatchesReference(t, openFull(t, python(t)))
}

// TestPythonConcurrentCommits: Python processes racing on one file: the CAS
// lets exactly one writer win each round, and only its side-writes land.
func TestPythonConcurrentCommits(t *testing.T) {
	storetest.ConcurrentCommits(t, openFull(t, python(t)), 6)
}

// TestPythonConformance is the whole suite (examples and the state machine)
// through the protocol, as a store author would run it.
func TestPythonConformance(t *testing.T) {
	argv := python(t)
	opt := quiet(t)
	conformance.Run(t, func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return Open(ctx, argv, cfg, opt)
	})
}

// TestPythonWorkload: the concurrent workload against a pool of Python
// processes sharing one SQLite file is linearizable.
func TestPythonWorkload(t *testing.T) {
	res, err := workload.Run(context.Background(), openFull(t, python(t)),
		workload.Config{Clients: 4, Executions: 3, Ops: 600, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Ok {
		t.Fatalf("verdict %s: %v", res.Verdict, res.Err)
	}
	if res.Counts.Failed+res.Counts.Indeterminate > 0 {
		t.Errorf("%d failed and %d indeterminate operations against a healthy adapter", res.Counts.Failed, res.Counts.Indeterminate)
	}
}

// TestPythonMutantCaught: with its CAS removed (--broken no-cas), the Python
// store is caught through the protocol by both scenarios' checks.
func TestPythonMutantCaught(t *testing.T) {
	argv := python(t, "--broken", "no-cas")
	opt := quiet(t)
	rep, err := conformance.Check(context.Background(), func(ctx context.Context, cfg model.Config) (model.Store, error) {
		return Open(ctx, argv, cfg, opt)
	}, conformance.CheckConfig{Seed: 1, Checks: 30, ShrinkTime: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || !strings.Contains(strings.Join(rep.MinimalSteps, "\n"), "lost update") {
		t.Errorf("conformance: passed %v; minimal steps:\n%s", rep.Passed, strings.Join(rep.MinimalSteps, "\n"))
	}
	res, err := workload.Run(context.Background(), openFull(t, argv), workload.Config{Clients: 4, Executions: 2, Ops: 400, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != linearizability.Illegal || !errors.Is(res.Err, linearizability.ErrLostUpdate) {
		t.Errorf("workload: verdict %s: %v", res.Verdict, res.Err)
	}
}

// TestUnknownOperation: both reference adapters answer an operation they do
// not know with not_applied, and keep serving.
func TestUnknownOperation(t *testing.T) {
	for name, argv := range map[string][]string{"python": python(t), "go": self("go-sqlite")} {
		t.Run(name, func(t *testing.T) {
			p, err := startProcess(argv, displayName(argv), quiet(t).Logger)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				p.kill()
				_ = p.reap(time.Second)
			}()
			call := func(id uint64, op string, args any) wire.Response {
				line, err := wire.EncodeRequest(id, op, args)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := p.call(context.Background(), id, op, line, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			hello := wire.Hello{Protocol: wire.Version, Store: wire.StoreInfo{Dir: t.TempDir(), Name: "t"}, TraceMax: 200}
			if resp := call(1, wire.OpHello, hello); !resp.OK {
				t.Fatalf("hello: %+v", resp.Error)
			}
			resp := call(2, "frobnicate", nil)
			if resp.OK || resp.Error.Kind != wire.KindNotApplied || !strings.Contains(resp.Error.Message, "frobnicate") {
				t.Errorf("unknown op answered %+v %+v", resp, resp.Error)
			}
			if resp := call(3, wire.OpLoad, wire.IDArgs{ExecutionID: "x"}); !resp.OK || string(resp.Result) != "null" {
				t.Errorf("load after the unknown op: %+v %s", resp.Error, resp.Result)
			}
		})
	}
}

// TestKilledProcessIsReplaced: a SIGKILL injected through Faults is a
// crashed client, not a broken adapter: the next operation runs on a new
// process, and the data is still there.
func TestKilledProcessIsReplaced(t *testing.T) {
	ctx := context.Background()
	s := openFull(t, python(t))
	faults, ok := s.(Faults)
	if !ok {
		t.Fatal("an exec: store does not implement Faults")
	}
	if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	pids := faults.PIDs()
	if len(pids) != 1 {
		t.Fatalf("pids %v, want one", pids)
	}
	if err := faults.Signal(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(faults.PIDs()) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	exe, err := s.Load(ctx, "a")
	if err != nil || exe == nil || exe.Version != 1 {
		t.Fatalf("load after the kill: %v, %v", exe, err)
	}
	if now := faults.PIDs(); len(now) != 1 || now[0] == pids[0] {
		t.Errorf("pids after the kill %v, before %v", now, pids)
	}
}

// TestPythonInMemory: an adapter that cannot share its store asks for one
// process, and concurrent callers are served one at a time.
func TestPythonInMemory(t *testing.T) {
	full := openFull(t, python(t, "--db", ":memory:"))
	st, _ := Unwrap(full)
	if cap(st.slots) != 1 {
		t.Fatalf("pool of %d processes for an in-memory store", cap(st.slots))
	}
	storetest.ConcurrentCommits(t, full, 4)
}
