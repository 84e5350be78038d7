package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCompletion: the completion scripts are written, and the shell's
// requests are answered with the command's own flags, the scenario names
// and the backend forms.
func TestCompletion(t *testing.T) {
	ask := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), args, &out, &errOut); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if got := ask("completion", sh); !strings.Contains(got, "storecheck") {
			t.Errorf("completion %s: %.80q", sh, got)
		}
	}
	if got := ask("__complete", "qualify", "--"); !strings.Contains(got, "--parallel\t") || !strings.Contains(got, "--shard\t") {
		t.Errorf("qualify's flags: %s", got)
	}
	if got := ask("__complete", "run", "--scenario", ""); !strings.Contains(got, "kill-during-install\t") || !strings.Contains(got, "conformance\t") {
		t.Errorf("scenario names: %s", got)
	}
	if got := ask("__complete", "run", "--backend", ""); !strings.Contains(got, "sqlite:\t") || !strings.Contains(got, "rqlite+process:\t") {
		t.Errorf("backend forms: %s", got)
	}
	if got := ask("__complete", ""); !strings.Contains(got, "qualify\t") || strings.Contains(got, "__worker") {
		t.Errorf("commands: %s", got)
	}
}

// TestCompletionNeedsAShell: completion without a shell, or with one it
// does not know, is bad input: one line on stderr naming the shells, exit
// 2, nothing on stdout (not cobra's help with exit 0).
func TestCompletionNeedsAShell(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "usage: storecheck completion bash|zsh|fish|powershell"},
		{[]string{"completion", "nope"}, `unknown shell "nope" (known: bash, fish, powershell, zsh)`},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), c.args, &out, &errOut)
		stderr := errOut.String()
		if code != ExitUsage || out.Len() != 0 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %.60q, stderr %q; want 2, nothing on stdout and one line saying %q", c.args, code, out.String(), stderr, c.want)
		}
	}
}
