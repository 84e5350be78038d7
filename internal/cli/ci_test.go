package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ciCommands are the storecheck command lines of ci/README.md and
// ci/storecheck.yml, continuation lines joined.
func ciCommands(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, name := range []string{"README.md", "storecheck.yml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "ci", name))
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(string(b), " ")
		for _, line := range strings.Split(text, "\n") {
			if m := regexp.MustCompile(`(?:^|[\s\x60(])(storecheck (?:[a-z]+)(?: [^\x60|]*)?)`).FindStringSubmatch(line); m != nil {
				out[name] = append(out[name], strings.TrimSpace(m[1]))
			}
		}
	}
	return out
}

// TestCIFlagsExist: every flag the CI workflow and its README pass to a
// storecheck command is one that command defines.
func TestCIFlagsExist(t *testing.T) {
	help := map[string]string{}
	checked := 0
	for file, cmds := range ciCommands(t) {
		for _, c := range cmds {
			fields := strings.Fields(c)
			cmd := fields[1]
			if _, ok := help[cmd]; !ok {
				_, stdout, stderr := run(t, cmd, "-h")
				help[cmd] = stdout + stderr
			}
			for _, f := range fields[2:] {
				if !strings.HasPrefix(f, "--") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
				checked++
				if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `(\s|$)`).MatchString(help[cmd]) {
					t.Errorf("%s: storecheck %s has no flag --%s (%s)", file, cmd, name, c)
				}
			}
		}
	}
	if checked < 8 {
		t.Errorf("only %d flags found in ci/: is the extraction broken?", checked)
	}
}

// TestCIWorkflow: the parts of ci/storecheck.yml GitHub runs differently
// from how they read. The report job's token can read main's artifacts and
// publish a check run; the diff step shows its Markdown before failing.
func TestCIWorkflow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "ci", "storecheck.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	_, report, ok := strings.Cut(text, "\n  report:\n")
	if !ok {
		t.Fatal("no report job")
	}
	head, _, _ := strings.Cut(report, "    steps:")
	for _, want := range []string{"actions: read", "checks: write"} {
		if !strings.Contains(head, want) {
			t.Errorf("the report job's permissions lack %q (dawidd6/action-download-artifact needs actions: read, mikepenz/action-junit-report checks: write)", want)
		}
	}
	_, diff, ok := strings.Cut(report, "name: Diff against main")
	if !ok {
		t.Fatal("no diff step")
	}
	diff, _, _ = strings.Cut(diff, "- name:")
	if !regexp.MustCompile(`storecheck diff [^\n]*\|\| status=\$\?`).MatchString(diff) || !strings.Contains(diff, `exit "$status"`) {
		t.Errorf("the diff step stops (bash -e) at diff's exit 1 before writing its Markdown to the job summary:\n%s", diff)
	}
}

// TestCIReadmeCommandRuns: the README's qualify command works as written in
// a fresh folder: its database paths need no folder made beforehand. The
// cluster backend is left out (no Docker engine needed) and the runs made
// small; the backends' paths are the README's.
func TestCIReadmeCommandRuns(t *testing.T) {
	var qualify string
	for _, c := range ciCommands(t)["README.md"] {
		if strings.HasPrefix(c, "storecheck qualify --backends") {
			qualify = c
		}
	}
	m := regexp.MustCompile(`--backends "([^"]+)"`).FindStringSubmatch(qualify)
	if m == nil {
		t.Fatalf("no qualify --backends command in ci/README.md")
	}
	var backends []string
	for _, b := range strings.Split(m[1], ",") {
		// A file path of the machine's own (sqlite:/tmp/sc/x.db) works
		// only where its folder happens to exist; {dir} works everywhere.
		if _, path, _ := strings.Cut(b, ":"); strings.HasPrefix(path, "/") {
			t.Errorf("ci/README.md's qualify names %q: an absolute path fails on a fresh machine without its folder; use {dir}", b)
		}
		if !strings.Contains(b, "+container") {
			backends = append(backends, b)
		}
	}
	t.Chdir(t.TempDir())
	args := []string{"qualify", "--backends", strings.Join(backends, ","), "--scenarios", "conformance", "--checks", "3",
		"--seed", "20261130", "--out", "storecheck-report", "--fail-on-not-run", "--quiet"}
	if code, stdout, stderr := run(t, args...); code != ExitOK {
		t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
	}
}
