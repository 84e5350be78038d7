package scenarios

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/reports"
)

// adapterPython is python3, resolved past a version manager's shim.
var adapterPython = sync.OnceValues(func() (string, error) {
	path, err := exec.LookPath("python3")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command(path, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
		return strings.TrimSpace(string(out)), nil
	}
	return path, nil
})

// pythonBackend is the exec: URL of a Python script of the repository with
// args, or skips the test without python3.
func pythonBackend(t *testing.T, script string, args ...string) string {
	t.Helper()
	py, err := adapterPython()
	if err != nil {
		t.Skip("NOT RUN: python3 not found")
	}
	abs, err := filepath.Abs(filepath.Join("..", script))
	if err != nil {
		t.Fatal(err)
	}
	return "exec:'" + py + "' '" + abs + "' " + strings.Join(args, " ")
}

// misbehaving is the test adapter that breaks the protocol as mode says
// (backends/adapter/testdata/misbehave.py): "MODE" or "MODE N".
func misbehaving(t *testing.T, mode string) string {
	return pythonBackend(t, filepath.Join("backends", "adapter", "testdata", "misbehave.py"), mode)
}

// TestBrokenAdapterIsAFail: an adapter that breaks its protocol mid-run
// (docs/ADAPTER.md §6: a crash, a malformed line, a wrong id, a second
// answer, a result of the wrong type, an exit right after hello or after an
// answer, an exit hidden by a helper holding its stdout) fails the backend
// at once in both scenarios: FAIL, guarantee "adapter protocol", the
// adapter's own first error as the reason. Never NOT RUN, never rapid's
// "flaky test", never availability after half a minute of retries.
func TestBrokenAdapterIsAFail(t *testing.T) {
	// An adapter that exits between requests is seen either reading (its
	// stdout closed) or writing the next request (a broken pipe),
	// whichever comes first: both are its own exit, reported.
	const gone = "the adapter closed its stdout||broken pipe"
	cases := []struct {
		scenario, mode string
		says           []string
	}{
		{"conformance", "crash", []string{"the adapter closed its stdout with the request in flight; it exited: exit status 11", "misbehave[crash]: segfault simulation"}},
		{"conformance", "malformed", []string{"malformed response on stdout line 6"}},
		{"conformance", "wrong_id", []string{"answers request 1006, not 6"}},
		{"conformance", "twice", []string{"answers request 6, not 7"}},
		{"conformance", "bool_as_int", []string{"is_processed: protocol violation: malformed result"}},
		{"conformance", "exit_after_hello", []string{"reset (request 2): ", gone, "exited"}},
		{"conformance", "bg_crash", []string{"the adapter exited with the request in flight", "exit status 11", "segfault simulation"}},
		// Mid-traffic (the 30th request): FAIL availability after 30 s of
		// heal retries, before.
		{"concurrent", "crash 30", []string{"it exited: exit status 11", "segfault simulation"}},
		{"concurrent", "malformed 30", []string{"malformed response on stdout line"}},
		{"concurrent", "twice 30", []string{"answers request"}},
		{"concurrent", "exit_after_answer 30", []string{gone, "exiting after answering"}},
		// Checking that the store is empty, before the traffic: NOT RUN
		// "workload could not start", before.
		{"concurrent", "crash 3", []string{"load (request 4)", "it exited: exit status 11"}},
		{"concurrent", "exit_after_hello", []string{"reset (request 2): ", gone, "exited"}},
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.mode, func(t *testing.T) {
			url := misbehaving(t, c.mode)
			start := time.Now()
			res := runAdapterScenario(t, url, c.scenario)
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
			if res.Verdict != reports.Fail || res.Guarantee != GuaranteeAdapterProtocol {
				t.Errorf("verdict %s, guarantee %q, want FAIL %q: %s", res.Verdict, res.Guarantee, GuaranteeAdapterProtocol, res.Reason)
			}
			for _, s := range append(c.says, "misbehave.py "+c.mode) {
				if !containsAny(res.Reason, strings.Split(s, "||")) {
					t.Errorf("reason %q does not say %q", res.Reason, s)
				}
			}
			for _, s := range []string{"flaky", "availability", "could not be opened", "unusable after an earlier failure", "\n"} {
				if strings.Contains(res.Reason, s) {
					t.Errorf("reason %q says %q", res.Reason, s)
				}
			}
		})
	}
}

// TestAdapterLingeringAfterShutdown: an adapter that answers shutdown but
// does not exit is killed after 5 s (ADAPTER.md §4.3) and noted; both
// scenarios pass it (conformance said NOT RUN "could not be opened").
func TestAdapterLingeringAfterShutdown(t *testing.T) {
	for _, scenario := range []string{"conformance", "concurrent"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel() // mostly waiting out the 5 s
			res := runAdapterScenario(t, misbehaving(t, "ignore_shutdown"), scenario)
			if res.Verdict != reports.Pass {
				t.Errorf("verdict %s: %s", res.Verdict, res.Reason)
			}
		})
	}
}

// TestAdapterStoreBugStillShrinks: a store bug behind a healthy adapter
// (the reference adapter without its CAS) is still a model conformance
// FAIL, shrunk, or a lost update in the concurrent scenario.
func TestAdapterStoreBugStillShrinks(t *testing.T) {
	url := pythonBackend(t, filepath.Join("adapters", "python", "sqlite_store.py"), "--broken", "no-cas")
	res := runAdapterScenario(t, url, "conformance")
	if res.Verdict != reports.Fail || res.Guarantee != "model conformance" || !strings.Contains(res.Reason, "lost update") {
		t.Errorf("conformance: %s %q: %s", res.Verdict, res.Guarantee, res.Reason)
	}
	if n := res.Metrics["minimal_steps"]; n < 1 || n > 4 {
		t.Errorf("conformance: minimal steps %v: not shrunk", n)
	}
	res = runAdapterScenario(t, url, "concurrent")
	if res.Verdict != reports.Fail || res.Guarantee == GuaranteeAdapterProtocol || !strings.Contains(res.Reason, "lost update") {
		t.Errorf("concurrent: %s %q: %s", res.Verdict, res.Guarantee, res.Reason)
	}
}

// runAdapterScenario runs scenario on url with small settings.
func runAdapterScenario(t *testing.T, url, scenario string) Result {
	t.Helper()
	tg := mustTarget(t, url)
	sc, err := Lookup(scenario)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return sc.Run(ctx, tg, Params{Seed: 1, OutDir: t.TempDir(), Checks: 5, Clients: 4, Ops: 300})
}

// containsAny says whether s contains one of alternatives.
func containsAny(s string, alternatives []string) bool {
	for _, a := range alternatives {
		if strings.Contains(s, a) {
			return true
		}
	}
	return false
}
