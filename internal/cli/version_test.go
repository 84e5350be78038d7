package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/storecheck/storecheck/reports"
)

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, "version")
	if code != ExitOK || !strings.HasPrefix(stdout, "storecheck ") || !strings.Contains(stdout, runtime.Version()) {
		t.Errorf("version: exit %d, %q", code, stdout)
	}
}

// summary.json says which storecheck made it, where, when it ended, and its
// overall verdict with the counts.
func TestSummaryProvenance(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "5", "--seed", "1", "--out", dir, "--quiet"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s reports.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != reports.SchemaVersion || s.Verdict != reports.Pass || s.Counts[reports.Pass] != 1 {
		t.Errorf("schema %d, verdict %q, counts %v", s.Schema, s.Verdict, s.Counts)
	}
	if s.Storecheck == nil || s.Storecheck.Go != runtime.Version() || s.Host == nil || s.Host.CPUs < 1 {
		t.Errorf("build %+v, host %+v", s.Storecheck, s.Host)
	}
	if s.Finished.Before(s.Started) || time.Since(s.Finished) > time.Hour {
		t.Errorf("started %v, finished %v", s.Started, s.Finished)
	}
}
