package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/reports"
)

// latestNow is where storecheck-out/latest points, or "" when it is not
// there.
func latestNow(t *testing.T) string {
	t.Helper()
	l, err := os.Readlink(filepath.Join(OutRoot, "latest"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// firstReport makes a complete report under storecheck-out/ and returns
// the folder latest points at.
func firstReport(t *testing.T) string {
	t.Helper()
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	l := latestNow(t)
	if l == "" {
		t.Fatal("no latest after a run")
	}
	return l
}

// TestLatestMovesOnlyOnceTheReportIsWhole: storecheck-out/latest moves to
// a new folder only once every file of its report is written. While the
// reports are rendered it still points at the earlier report, and a
// command whose reports cannot be rendered (run, replay, merge) or whose
// own report cannot be written (soak's soak.json) exits 2 and leaves it
// there: it never points at a half-written report.
func TestLatestMovesOnlyOnceTheReportIsWhole(t *testing.T) {
	t.Chdir(t.TempDir())
	qualifyTwoShards(t)
	before := firstReport(t)
	renderFails := func(string) error { return errors.New("the disk is full") }
	// What a command does on a render that fails once it has written
	// something: summary.md, then index.html fails.
	halfRenders := func(dir string) error {
		if err := os.WriteFile(filepath.Join(dir, reports.MarkdownFile), []byte("half"), 0o644); err != nil {
			return err
		}
		return renderFails(dir)
	}
	// soak.json cannot be written: a folder that is not empty stands
	// where it goes.
	soakCannotBeWritten := func(dir string) error {
		if err := reports.Render(dir); err != nil {
			return err
		}
		return os.MkdirAll(filepath.Join(dir, reports.SoakJSON, "in-the-way"), 0o755)
	}
	small := []string{"--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--quiet"}
	cases := []struct {
		name   string
		cmd    func(context.Context, *env, []string) (int, error)
		args   []string
		render func(string) error
	}{
		{"run", runCommand, small, halfRenders},
		{"qualify", qualifyCommand, []string{"--backends", "memory:", "--scenarios", "conformance", "--checks", "3", "--quiet"}, renderFails},
		{"replay", replayCommand, []string{"--quiet", filepath.Join(OutRoot, before)}, halfRenders},
		{"merge", mergeCommand, []string{"s1", "s2"}, halfRenders},
		{"soak", soakCommand, []string{"--load", "none", "--seeds", "1", "--backends", "memory:", "--scenarios", "conformance", "--checks", "3", "--quiet"}, soakCannotBeWritten},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := c.cmd(context.Background(), &env{stdout: &stdout, stderr: &stderr, render: c.render}, c.args)
			if code != ExitUsage || err == nil {
				t.Fatalf("exit %d, error %v; want 2 and an error", code, err)
			}
			if now := latestNow(t); now != before {
				t.Errorf("latest -> %q after the report could not be written (%v), want it left at %q", now, err, before)
			}
		})
	}
	// While a report is rendered, latest is still the earlier one.
	before = latestNow(t)
	var during string
	watch := func(dir string) error {
		during = latestNow(t)
		return reports.Render(dir)
	}
	var stdout, stderr bytes.Buffer
	if code, err := runCommand(context.Background(), &env{stdout: &stdout, stderr: &stderr, render: watch}, small); code != ExitOK {
		t.Fatalf("run: exit %d: %v", code, err)
	}
	after := latestNow(t)
	if during != before || after == before || !strings.HasPrefix(after, "20") {
		t.Errorf("latest -> %q while the reports were rendered, %q after; want %q, then the new folder", during, after, before)
	}
}
