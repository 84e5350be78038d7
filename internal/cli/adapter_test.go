package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAdapterFlag: --adapter runs an out-of-process store like
// --backend exec:…, its mutant exits 1 (the concurrent scenario finds its
// lost updates in a few hundred steps), and a command line that does not
// parse is bad usage.
func TestAdapterFlag(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("NOT RUN: python3 not found")
	}
	if out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(out) > 1 {
		py = strings.TrimSpace(string(out)) // skip a version manager's shim per process
	}
	script := filepath.Join("..", "..", "adapters", "python", "sqlite_store.py")
	args := func(extra, scenario string) []string {
		return []string{"run", "--adapter", py + " " + script + extra, "--scenario", scenario, "--seed", "1",
			"--checks", "10", "--clients", "4", "--ops", "300", "--quiet", "--out", t.TempDir()}
	}
	if code, stdout, stderr := run(t, args("", "conformance")...); code != ExitOK || !strings.Contains(stdout, "PASS") {
		t.Errorf("healthy adapter: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, args(" --broken no-cas", "concurrent")...); code != ExitFail || !strings.Contains(stdout, "lost update") {
		t.Errorf("mutant adapter: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := run(t, args(" 'unterminated", "conformance")...); code != ExitUsage || !strings.Contains(stderr, "unterminated single quote") {
		t.Errorf("bad command line: exit %d: %s", code, stderr)
	}
}

// TestAdapterThatBreaksFails: an adapter that crashes in the middle of the
// concurrent traffic fails the run at once (exit 1), with its own error as
// the reason: not after half a minute of heal retries as availability.
func TestAdapterThatBreaksFails(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("NOT RUN: python3 not found")
	}
	script := filepath.Join("..", "..", "backends", "adapter", "testdata", "misbehave.py")
	start := time.Now()
	code, stdout, stderr := run(t, "run", "--adapter", py+" "+script+" crash 30", "--scenario", "concurrent", "--seed", "1",
		"--clients", "4", "--ops", "300", "--quiet", "--out", t.TempDir())
	if code != ExitFail || !strings.Contains(stdout, "exit status 11") || !strings.Contains(stdout, "segfault simulation") || strings.Contains(stdout, "availability") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v", d)
	}
}
