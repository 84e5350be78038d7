package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMENamesEveryScenario: the README says what every scenario
// `storecheck scenarios` lists does, each named in backquotes, so that a
// new scenario is not left for users to find in the code.
func TestREADMENamesEveryScenario(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range All() {
		if !strings.Contains(string(b), "`"+sc.Name+"`") {
			t.Errorf("README.md does not name the scenario %s", sc.Name)
		}
	}
}
