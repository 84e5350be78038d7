// Package realsqld_test runs storecheck's command line against real sqld
// processes: whether a run's token stays secret and whether a run leaves
// nothing behind. They are a package of their own so that they run in a
// process of their own, beside the other packages' tests instead of after
// them in internal/cli's (they mostly wait on sqld and its sweep levels),
// and so that "nothing of this process is left" covers exactly these runs.
package realsqld_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storecheck/storecheck/internal/cli/clitest"

	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/libsql/sqld"
	"github.com/storecheck/storecheck/internal/cli"
	"github.com/storecheck/storecheck/reports"
)

// jwtHeader starts every token a primary storecheck starts accepts: the
// base64 of {"alg":"EdDSA", …. No file a run writes may hold one.
const jwtHeader = "eyJhbGciOiJFZERTQSIs"

// realPrimary starts an sqld that requires a JWT, or skips the test (NOT
// RUN) where there is none.
func realPrimary(t *testing.T) *libsql.Primary {
	t.Helper()
	p, err := libsql.StartPrimary(context.Background(), libsql.ReplicaTarget{Net: libsql.NetLoopback, Auth: true}, t.TempDir())
	if errors.Is(err, sqld.ErrUnavailable) {
		t.Skipf("NOT RUN: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestRealSqldTokenNeverWritten runs the three replica scenarios against a
// real sqld that requires a JWT: once on a primary the test started, with
// its token planted where storecheck reads it (the environment), and once
// on primaries storecheck starts with a key pair of its own. The runs must
// pass (the token really works), and no output, report, run folder or
// server log may hold the planted token or any token of the run's key,
// even with RUST_LOG=debug in the environment.
func TestRealSqldTokenNeverWritten(t *testing.T) {
	// At this level sqld would log every request's Authorization header;
	// storecheck pins its servers to info.
	t.Setenv("RUST_LOG", "debug")
	p := realPrimary(t)
	t.Setenv("LIBSQL_AUTH_TOKEN", p.Token())
	dbs, outs := t.TempDir(), t.TempDir()
	small := []string{"--scenario", "conformance,concurrent,replica-lag-conflict", "--seed", "3",
		"--checks", "5", "--clients", "3", "--executions", "2", "--ops", "90"}
	urls := []string{
		"libsql+replica:" + filepath.Join(dbs, "a.db") + "?primary=" + p.URL() + "&sync_interval=50ms",
		"libsql+replica:" + filepath.Join(dbs, "b.db") + "?sync_interval=50ms",
	}
	// The two runs are independent (their own databases, output folders
	// and primaries; a namespace's name carries a random tag), so they run
	// side by side: the test waits on sqld, not on the CPU.
	printed := make([]bytes.Buffer, len(urls))
	known := &knownIssues{}
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			out := filepath.Join(outs, string(rune('a'+i)))
			var stdout, stderr bytes.Buffer
			code := cli.Main(context.Background(), append([]string{"run", "--out", out, "--backend", u}, small...), &stdout, &stderr)
			t.Logf("%s: exit %d\n%s%s", u, code, clitest.LastLines(stdout.String(), 5), stderr.String())
			printed[i].Write(stdout.Bytes())
			printed[i].Write(stderr.Bytes())
			sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Errorf("%s: %v", u, err)
				return
			}
			for _, r := range sum.Runs {
				if r.Verdict != reports.Pass && !known.explains(t, r) {
					t.Errorf("%s on %s: %s: %s", r.Scenario, u, r.Verdict, r.Reason)
				}
				if i == 1 && (len(r.Servers) == 0 || !strings.Contains(r.Servers[0], "sqld")) {
					t.Errorf("%s: the summary does not say which sqld ran: %q", r.Scenario, r.Servers)
				}
			}
		})
	}
	wg.Wait()
	files := clitest.GrepSecrets(t, append(printed[0].Bytes(), printed[1].Bytes()...), []string{outs, dbs}, p.Token(), jwtHeader)
	if files < 20 {
		t.Errorf("the runs wrote only %d files: the grep proves little", files)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if left := libsql.Leftovers(context.Background()); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	known.notRunIfAny(t)
}

// TestRealSqldLeavesNothing: after a passing run, a failing run (a
// mutant) and an interrupted run, no sqld process, network namespace,
// data folder or iptables rule of this process is left. The passing run
// is the concurrent scenario: a passing replica-lag-conflict sweep on
// primaries storecheck starts (every level's namespace, link shaping and
// cut rules) is TestRealSqldTokenNeverWritten's second run, which checks
// the same after it; the interrupted run stops a sweep part way.
func TestRealSqldLeavesNothing(t *testing.T) {
	if _, err := sqld.Find(context.Background(), "", ""); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	dbs := t.TempDir()
	small := []string{"--seed", "3", "--clients", "3", "--executions", "2", "--ops", "90"}
	cases := []struct {
		name, url, scenario string
		interrupt           time.Duration
		want                reports.Verdict
	}{
		{"passing", "libsql+replica:" + filepath.Join(dbs, "p.db") + "?sync_interval=50ms", "concurrent", 0, reports.Pass},
		{"failing", "libsql+replica:" + filepath.Join(dbs, "f.db") + "?sync_interval=50ms&mutant=cas-on-replica", "concurrent", 0, reports.Fail},
		{"interrupted", "libsql+replica:" + filepath.Join(dbs, "i.db") + "?sync_interval=50ms", "replica-lag-conflict", 3 * time.Second, reports.Interrupted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.interrupt > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx) // as Ctrl-C does
				defer time.AfterFunc(c.interrupt, cancel).Stop()
			}
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := cli.Main(ctx, append([]string{"run", "--out", out, "--backend", c.url, "--scenario", c.scenario}, small...), &stdout, &stderr)
			t.Logf("exit %d\n%s%s", code, clitest.LastLines(stdout.String(), 3), stderr.String())
			sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			known := &knownIssues{}
			if got := sum.Runs[0].Verdict; got != c.want && !(c.want == reports.Pass && known.explains(t, sum.Runs[0])) {
				t.Errorf("verdict %s (%s), want %s", got, sum.Runs[0].Reason, c.want)
			}
			if left := libsql.Leftovers(context.Background()); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			known.notRunIfAny(t)
		})
	}
}

// knownIssues collects the runs that did not show the PASS the test wanted
// for a reason that is not storecheck's: a failed run a confirmed upstream
// bug explains (the runner matched its evidence), and a run NOT RUN
// because a go-libsql call outlived its deadline and was abandoned (its
// calls cannot be cancelled; seen on a machine loaded far past its cores,
// as scenarios' TestReplicaLagConflictOnSqld allows too). The test then
// ends NOT RUN, after its other checks, instead of PASS.
type knownIssues struct {
	mu   sync.Mutex
	seen []string
}

// explains reports whether r is such a run, and records it.
func (k *knownIssues) explains(t *testing.T, r reports.Run) bool {
	t.Helper()
	var why string
	switch {
	case r.Verdict == reports.Fail && r.KnownIssue != "":
		why = fmt.Sprintf("%s: FAIL explained by known issue %s: %s", r.Scenario, r.KnownIssue, r.Reason)
	case r.Verdict == reports.NotRun && strings.Contains(r.Reason, "abandoned after its deadline"):
		why = fmt.Sprintf("%s: NOT RUN, a go-libsql call abandoned after its deadline (a machine too slow for the run?): %s", r.Scenario, r.Reason)
	default:
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seen = append(k.seen, why)
	return true
}

// notRunIfAny ends the test NOT RUN when a known issue struck (a failure
// already recorded stays a failure).
func (k *knownIssues) notRunIfAny(t *testing.T) {
	t.Helper()
	if len(k.seen) > 0 {
		t.Skipf("NOT RUN (in part): %s", strings.Join(k.seen, "; "))
	}
}
