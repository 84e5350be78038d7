package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Every summary.json validates against the schema docs/ ships: a passing
// and a failing run, conformance and concurrent, and a replay's.
func TestSummaryMatchesSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	schema, err := c.Compile(filepath.Join("..", "..", "docs", "summary.schema.json"))
	if err != nil {
		t.Fatalf("docs/summary.schema.json: %v", err)
	}
	dir := t.TempDir()
	run(t, "run", "--backend", "memory:", "--backend", "mutant:blind-write?path="+filepath.Join(dir, "m.db"),
		"--scenario", "conformance,concurrent", "--checks", "20", "--ops", "300", "--seed", "4", "--out", dir, "--quiet")
	replayed := filepath.Join(dir, "replayed")
	run(t, "replay", "--run", "1", "--out", replayed, "--quiet", filepath.Join(dir, "summary.json"))
	// A catalogue's summary: its mutant's runs expect FAIL.
	catalogue := filepath.Join(dir, "mutants")
	if code, _, stderr := run(t, "mutants", "--only", "blind-write,memory", "--seed", "4", "--out", catalogue, "--quiet"); code != ExitOK {
		t.Fatalf("mutants: exit %d\n%s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(catalogue, "summary.json")); err != nil || !strings.Contains(string(b), `"expect": "FAIL"`) {
		t.Errorf("the catalogue's summary.json states no expectation: %v", err)
	}
	for _, path := range []string{filepath.Join(dir, "summary.json"), filepath.Join(replayed, "summary.json"), filepath.Join(catalogue, "summary.json")} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("%s does not match docs/summary.schema.json: %v", path, err)
		}
	}
}
