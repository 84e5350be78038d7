package mutantrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMENamesEverySubject: the README's account of `storecheck mutants`
// names every mutant the command runs, in backquotes, so that a mutant
// added to the catalogue is not missing from what users read it checks.
func TestREADMENamesEverySubject(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, s := range Subjects() {
		if s.Kind == Mutant && !strings.Contains(readme, "`"+s.Name+"`") {
			t.Errorf("README.md does not name the mutant %s", s.Name)
		}
	}
}
