package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runIn is run with input on standard input.
func runIn(t *testing.T, input []byte, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := MainIO(context.Background(), args, bytes.NewReader(input), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// testdata reads a history of linearizability/testdata.
func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "linearizability", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oneLineOn says whether s is one line.
func oneLineOn(s string) bool {
	return s != "" && strings.Count(strings.TrimSpace(s), "\n") == 0
}

// TestCheckReadsStandardInput: check - reads the history from standard
// input, as check FILE reads a file: the same verdict and exit code, the
// history named "standard input", a failed check's visualization in the
// current folder (there is no folder beside it), and what is not a
// history refused in one line that names no file of storecheck's own.
func TestCheckReadsStandardInput(t *testing.T) {
	ok, bad, malformed := testdata(t, "indeterminate_ok.jsonl"), testdata(t, "lost_update.jsonl"), testdata(t, "malformed.jsonl")
	t.Chdir(t.TempDir())
	code, stdout, stderr := runIn(t, ok, "check", "-")
	if code != ExitOK || !strings.HasPrefix(stdout, "standard input: PASS") {
		t.Errorf("check - of a linearizable history: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runIn(t, bad, "check", "--timeout", "10s", "-")
	if code != ExitFail || !strings.HasPrefix(stdout, "standard input: FAIL") || !strings.Contains(stdout, "visualization: stdin.visualization.html") {
		t.Errorf("check - of a lost update: exit %d, want 1 and the visualization in the current folder\n%s%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile("stdin.visualization.html"); err != nil || !bytes.Contains(b, []byte("<html")) {
		t.Errorf("no visualization in the current folder: %v", err)
	}
	for name, input := range map[string][]byte{"malformed": malformed, "empty": nil} {
		code, stdout, stderr = runIn(t, input, "check", "-")
		if code != ExitUsage || stdout != "" || !oneLineOn(stderr) || !strings.Contains(stderr, "standard input") || strings.Contains(stderr, os.TempDir()) {
			t.Errorf("check - of a %s history: exit %d, stdout %q, stderr %q; want 2 and one line naming standard input", name, code, stdout, stderr)
		}
	}
}

// TestSummaryCommandsReadStandardInput: diff and replay take - for a
// summary read from standard input, as they take a file; diff refuses -
// twice (standard input is read once) and merge refuses it (it copies
// each shard's run folders, which are beside the shard's summary and not
// on standard input), each in one line.
func TestSummaryCommandsReadStandardInput(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--seed", "1", "--out", "a", "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	sum, err := os.ReadFile(filepath.Join("a", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runIn(t, sum, "diff", "-", "a")
	if code != ExitOK || !strings.Contains(stdout, "✅ no regression") || !strings.Contains(stdout, "1 cells compared") {
		t.Errorf("diff - a: exit %d, want 0 and the one cell compared\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runIn(t, sum, "diff", "a", "-")
	if code != ExitOK || !strings.Contains(stdout, "1 cells compared") {
		t.Errorf("diff a -: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runIn(t, sum, "replay", "--quiet", "--out", "r", "-")
	if code != ExitOK || stderr != "" {
		t.Errorf("replay -: exit %d, want 0: %s", code, stderr)
	}
	if md, err := os.ReadFile(filepath.Join("r", "summary.md")); err != nil || !strings.Contains(string(md), "Replay of `standard input#1`: reproduced") {
		t.Errorf("replay -: its summary.md does not name standard input#1 as reproduced (%v)", err)
	}
	for _, args := range [][]string{{"diff", "-", "-"}, {"merge", "-", "a"}, {"diff", "-", "a"}} {
		input := sum
		if args[0] == "diff" && args[2] == "a" {
			input = []byte(`{"not":"a summary"}`)
		}
		code, stdout, stderr = runIn(t, input, args...)
		if code != ExitUsage || stdout != "" || !oneLineOn(stderr) || !strings.Contains(stderr, "standard input") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line naming standard input", args, code, stdout, stderr)
		}
	}
}
