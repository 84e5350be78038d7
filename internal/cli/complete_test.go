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
