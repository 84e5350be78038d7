// Package clitest holds what the command line's tests share across their
// packages (internal/cli and internal/cli/realsqld): the grep for secrets in
// everything a run printed and wrote, and the tail of a run's output.
package clitest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GrepSecrets fails the test if any secret appears in what the runs printed
// or in any file under dirs; it returns how many files it read, so that a
// caller can tell a grep of almost nothing from a clean one.
func GrepSecrets(t testing.TB, printed []byte, dirs []string, secrets ...string) int {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(printed, []byte(s)) {
			t.Errorf("a secret (%.12s…) was printed", s)
		}
	}
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, s := range secrets {
				if bytes.Contains(raw, []byte(s)) {
					t.Errorf("%s holds a secret (%.12s…)", path, s)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}
