package mutants_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends"
	"github.com/storecheck/storecheck/backends/mutants"
	"github.com/storecheck/storecheck/model"
)

// Every entry has a unique name and one sentence saying which clause it
// breaks; none is correct (guarded-upsert, once listed as the correct twin
// of version-guard, breaks property 3 by the project's Decision, and the
// conformance suite draws the commit that shows it).
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	var correct []string
	for _, m := range mutants.Catalogue() {
		if seen[m.Name] {
			t.Errorf("%s: listed twice", m.Name)
		}
		seen[m.Name] = true
		if m.Correct {
			correct = append(correct, m.Name)
		}
		b := strings.TrimSpace(m.Breaks)
		if b == "" || !strings.HasSuffix(b, ".") || strings.Count(b, ". ") > 0 || strings.Contains(b, "\n") {
			t.Errorf("%s: Breaks must be one non-empty sentence, got %q", m.Name, m.Breaks)
		}
	}
	if len(correct) != 0 {
		t.Errorf("correct entries %v, want none", correct)
	}
	for _, want := range []string{"blind-write", "version-guard", "split-commit", "dedupe-before-cas", "trace-off-by-one",
		"trace-index-reset", "stale-timer-sweep", "due-timers-strict", "due-timers-ignore-now", "due-timers-unordered", "outbox-unordered", "outbox-seq-reuse", "seq-sharded", "seq-before-tx", "event-id-nocase", "execution-id-nocase", "timer-path-nocase", "page-skip", "page-prefix-skip",
		"version-not-restored", "stale-read", "read-check-write", "split-visible", "periodic-snapshot", "guarded-upsert"} {
		if !seen[want] {
			t.Errorf("mutant %s is missing", want)
		}
	}
}

// A bad mutant URL fails before anything is opened, with a clear error that
// lists the known mutants.
func TestOpenErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing", "x.db")
	cases := []struct{ url, want string }{
		{"mutant:nope", `mutant: unknown mutant "nope" (known: blind-write, version-guard,`},
		{"mutant:", `mutant: no name (want mutant:NAME, known: blind-write,`},
		{"mutant:blind-write?size=3", `unknown or repeated parameter "size"`},
		{"mutant:blind-write?path=a&path=b", `unknown or repeated parameter "path"`},
		{"mutant:blind-write?path=" + missing, "does not exist"},
		{"mutant:blind-write?path=", "empty database path"},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			verr := backends.Validate(c.url)
			s, err := backends.Open(context.Background(), c.url, model.DefaultConfig())
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			for _, e := range []error{verr, err} {
				if e == nil || !strings.Contains(e.Error(), c.want) {
					t.Errorf("error %v, want it to contain %q", e, c.want)
				}
			}
			if strings.Contains(c.want, "known:") && !strings.Contains(err.Error(), "read-check-write") {
				t.Errorf("error %v does not list every mutant", err)
			}
		})
	}
}

// Each mutant opens on a fresh file in a folder of its own, which Close
// removes; with path=FILE it uses FILE and leaves it.
func TestOpenOwnsItsFiles(t *testing.T) {
	given, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp) // every later t.TempDir lands here too: take none

	ctx := context.Background()
	for _, name := range mutants.Names() {
		t.Run(name, func(t *testing.T) {
			s, err := backends.Open(ctx, "mutant:"+name, model.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, &model.Execution{ID: "a"}); err != nil {
				t.Errorf("save: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "storecheck-*")); len(left) == 0 {
				t.Errorf("no folder of its own in %s", tmp)
			}
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("left behind after Close: %v", left)
			}

			file := filepath.Join(given, name+".db")
			s, err = backends.Open(ctx, "mutant:"+name+"?path="+file, model.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("the given file: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("left behind after Close: %v", left)
			}
		})
	}
}

// Every entry keeps what the conformance harness needs to reuse one
// database across test cases.
func TestReusable(t *testing.T) {
	ctx := context.Background()
	for _, name := range mutants.Names() {
		s, err := backends.Open(ctx, "mutant:"+name, model.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		_, d := s.(model.Dumper)
		_, r := s.(model.Resetter)
		_, m := s.(model.TraceMaxSetter)
		if !d || !r || !m {
			t.Errorf("%s: Dumper %v, Resetter %v, TraceMaxSetter %v", name, d, r, m)
		}
		s.Close()
	}
}
