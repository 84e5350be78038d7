package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADMECommands runs every storecheck command of the README's shell
// blocks, in order, as written, in a scratch folder holding a freshly built
// bin/storecheck and the repository's adapters: each must exit 0, or 1
// where its comment says so ("exits 1", "FAIL", "caught:": a failure
// shown on purpose). Commands
// that need a server this machine lacks (rqlited, a container engine) are
// reported NOT RUN with the reason. It takes minutes (the soak and the
// real-sqld runs), so it runs only with STORECHECK_README=1 (make readme).
func TestREADMECommands(t *testing.T) {
	if os.Getenv("STORECHECK_README") == "" {
		t.Skip("NOT RUN: set STORECHECK_README=1 (make readme) to run every README command; it takes minutes")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The commands' folder is kept when one of them fails: its run folders
	// are the evidence (a FAIL against a real server is triaged from them).
	dir, err := os.MkdirTemp("", "storecheck-readme-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the commands' folder, with every run folder, is kept: %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "storecheck"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "adapters"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the adapters: %v\n%s", err, out)
	}
	rqlited := os.Getenv("RQLITED")
	for _, line := range readmeCommands(string(readme)) {
		cmd, comment := splitComment(line)
		if !strings.Contains(cmd, "bin/storecheck") {
			continue // make, pip: the repository's own setup
		}
		switch {
		case strings.Contains(cmd, "rqlite+container:"):
			t.Logf("NOT RUN %s: no container engine on this machine kind", cmd)
			continue
		case strings.Contains(cmd, "rqlite+process:") && rqlited == "":
			t.Logf("NOT RUN %s: no rqlited (set RQLITED)", cmd)
			continue
		}
		cmd = strings.ReplaceAll(cmd, "/path/to/rqlited", rqlited)
		want := 0
		if regexp.MustCompile(`exits 1|\bFAIL\b|caught:`).MatchString(comment) {
			want = 1
		}
		t.Run(cmd, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			c := exec.CommandContext(ctx, "sh", "-c", cmd)
			c.Dir = dir
			var out bytes.Buffer
			c.Stdout, c.Stderr = &out, &out
			start := time.Now()
			err := c.Run()
			code := c.ProcessState.ExitCode()
			t.Logf("exit %d in %v", code, time.Since(start).Round(time.Second))
			if code != want {
				t.Errorf("exit %d, want %d (%v)\n%s", code, want, err, tail(out.String(), 30))
			}
		})
	}
}

// readmeCommands returns the lines of the sh code blocks, continuation
// lines joined.
func readmeCommands(readme string) []string {
	var out []string
	in := false
	var cont string
	for _, l := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in || strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#"):
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cont += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		out = append(out, strings.TrimSpace(cont+l))
		cont = ""
	}
	return out
}

// splitComment splits a shell line at its comment: a # after a space,
// outside quotes.
func splitComment(line string) (cmd, comment string) {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case quote == 0 && r == '#' && i > 0 && line[i-1] == ' ':
			return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		}
	}
	return strings.TrimSpace(line), ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func TestReadmeParsing(t *testing.T) {
	got := readmeCommands("x\n```sh\n# c\nbin/storecheck a 'b # c' # d\nRQLITED=x bin/storecheck run \\\n  --seed 1\n```\nbin/storecheck no\n")
	if len(got) != 2 || got[1] != "RQLITED=x bin/storecheck run    --seed 1" {
		t.Fatalf("%q", got)
	}
	if cmd, comment := splitComment(got[0]); cmd != "bin/storecheck a 'b # c'" || comment != "d" {
		t.Errorf("%q %q", cmd, comment)
	}
}
