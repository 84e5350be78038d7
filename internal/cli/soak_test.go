package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/reports"
)

// readSoak reads the soak.json a soak wrote.
func readSoak(t *testing.T, dir string) reports.Soak {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, reports.SoakJSON))
	if err != nil {
		t.Fatal(err)
	}
	var s reports.Soak
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("soak.json: %v", err)
	}
	return s
}

// A soak counts every FAIL of a backend it was told is correct as a false
// alarm, with the run's folder, and exits 1; the correct backend's runs
// count as PASS, seed after seed.
func TestSoakCountsFalseAlarms(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(t, "soak", "--load", "none", "--seeds", "2", "--seed", "7",
		"--backends", "memory:,mutant:blind-write?path={dir}/m.db", "--scenarios", "conformance",
		"--checks", "40", "--out", dir, "--quiet")
	if code != ExitFail {
		t.Fatalf("exit %d, want %d (a broken backend in a soak is a false alarm)\nstdout:\n%s\nstderr:\n%s", code, ExitFail, stdout, stderr)
	}
	s := readSoak(t, dir)
	if s.Runs != 4 || s.Seeds != 2 {
		t.Errorf("soak of %d runs over %d seeds, want 4 over 2", s.Runs, s.Seeds)
	}
	if len(s.FalseAlarms) != 2 {
		t.Fatalf("%d false alarms, want the mutant's 2: %+v", len(s.FalseAlarms), s.FalseAlarms)
	}
	seeds := map[uint64]bool{}
	for _, f := range s.FalseAlarms {
		if !strings.HasPrefix(f.Backend, "mutant:blind-write") || f.Dir == "" || f.Reason == "" {
			t.Errorf("false alarm %+v: want the mutant's run with its folder and reason", f)
		}
		if _, err := os.Stat(filepath.Join(dir, f.Dir)); err != nil {
			t.Errorf("false alarm's folder: %v", err)
		}
		seeds[f.Seed] = true
	}
	if !seeds[7] || !seeds[8] {
		t.Errorf("false alarms at seeds %v, want 7 and 8", seeds)
	}
	for _, p := range s.Pairs {
		if p.Backend == "memory:" && p.Pass != 2 {
			t.Errorf("memory: %+v, want 2 PASS", p)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, reports.SoakMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "2 false alarms in 4 runs") {
		t.Errorf("soak.md headline:\n%s", md)
	}
	if s.Load.Load != "none" {
		t.Errorf("load %q, want none", s.Load.Load)
	}
}

// Under stress-ng the soak records the load it measured, and a correct
// backend raises no alarm.
func TestSoakUnderStress(t *testing.T) {
	if _, err := exec.LookPath("stress-ng"); err != nil {
		t.Skip("NOT RUN: no stress-ng (apt-get install -y stress-ng)")
	}
	dir := t.TempDir()
	code, stdout, stderr := run(t, "soak", "--seeds", "1", "--seed", "3", "--load-cpus", "1",
		"--backends", "sqlite:{dir}/s.db", "--scenarios", "conformance,concurrent",
		"--checks", "20", "--ops", "300", "--out", dir, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit %d on a correct backend\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	s := readSoak(t, dir)
	if s.Load.Load == "none" || s.Load.Samples < 1 || s.Load.CPUs < 1 {
		t.Errorf("load not measured: %+v", s.Load)
	}
	if s.Runs != 2 || len(s.FalseAlarms) != 0 {
		t.Errorf("%d runs, %d false alarms; want 2 runs, none", s.Runs, len(s.FalseAlarms))
	}
	for _, n := range s.Notes {
		if strings.Contains(n, "outlived") {
			t.Errorf("the soak's stress-ng outlived it: %s", n)
		}
	}
}

// Bad soak flags are usage errors: one line, exit 2, before the output
// folder is made or stress-ng starts; no given value is replaced by
// another (--load-cpus -1 ran one stressor per CPU, --load-limit 0 or -1s
// an hour, a seed past the largest wrapped to 0, --shard repeated run
// positions, --accept-known=false was turned on).
func TestSoakBadFlags(t *testing.T) {
	small := []string{"--backends", "memory:", "--scenarios", "conformance", "--checks", "1", "--seeds", "1", "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--seeds", "0"}, "--seeds must be between 1"},
		{[]string{"--load", "cpu-burn"}, `unknown load "cpu-burn"`},
		{[]string{"--load-cpus", "-1"}, "--load-cpus must be 0 (one per CPU) or more, got -1"},
		{[]string{"--load-limit", "0"}, "--load-limit must be positive, got 0s"},
		{[]string{"--load-limit", "-1s"}, "--load-limit must be positive, got -1s"},
		{[]string{"--load", "none", "--load-cpus", "2"}, "--load none does not start"},
		{[]string{"--load", "none", "--load-limit", "1m"}, "--load none does not start"},
		{[]string{"--load", "none", "--shard", "1/2"}, "soak takes no --shard"},
		{[]string{"--load", "none", "--accept-known=false"}, "--accept-known=false"},
		{[]string{"--load", "none", "--seed", "18446744073709551615", "--seeds", "2"}, "goes past the largest seed"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append(append([]string{"soak"}, small...), append(c.args, "--out", out)...)
		code, _, stderr := run(t, args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line saying %q", c.args, code, stderr, ExitUsage, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the output folder was made (%v): the soak started", c.args, err)
		}
	}
}
