package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/chaos/lossyfs"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/reports"
)

// TestPowerLossAcceptance is #18's acceptance end to end: FULL passes with
// nothing lost, NORMAL passes and says how much each cut lost, the store
// that claims FULL and runs OFF exits 1 naming durability.
func TestPowerLossAcceptance(t *testing.T) {
	if err := lossyfs.Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	dir := t.TempDir()
	cases := []struct {
		url  string
		code int
		says string
	}{
		{"sqlite:" + filepath.Join(dir, "f.db") + "?synchronous=full", ExitOK, "synchronous=FULL: 12 power cuts"},
		{"libsql:" + filepath.Join(dir, "n.db") + "?synchronous=normal", ExitOK, "synchronous=NORMAL: 12 power cuts"},
		{"mutant:unsynced-full?path=" + filepath.Join(dir, "m.db"), ExitFail, "durability: acknowledged commit"},
		{"runs+sqlite:" + filepath.Join(dir, "r.db") + "?synchronous=full", ExitOK, "12 power cuts"},
		{"runs+mutant:unsynced-full?path=" + filepath.Join(dir, "rm.db"), ExitFail, "durability: the recovered run store is not what all the acknowledged writes leave"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := run(t, "run", "--backend", c.url, "--scenario", "power-loss", "--seed", "1", "--out", out)
		if code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", c.url, code, c.code, stdout, stderr)
		}
		sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		r := sum.Runs[0]
		if !strings.Contains(r.Reason, c.says) {
			t.Errorf("%s: reason %q does not say %q", c.url, r.Reason, c.says)
		}
		if c.code == ExitFail && r.Guarantee != "durability" {
			t.Errorf("%s: guarantee %q, want durability", c.url, r.Guarantee)
		}
		if c.code == ExitOK {
			cuts, err := os.ReadFile(filepath.Join(out, r.Dir, evidence.CutsFile))
			if err != nil || !strings.Contains(string(cuts), `"lost"`) {
				t.Errorf("%s: %s: %v %s", c.url, evidence.CutsFile, err, cuts)
			}
		}
		if _, err := os.Stat(strings.TrimPrefix(strings.SplitN(c.url, "?", 2)[0], "sqlite:")); err == nil && strings.HasPrefix(c.url, "sqlite:") {
			t.Errorf("%s: the URL's own file was created; the run must use its mount", c.url)
		}
	}
}
