// Command testsum reads `go test -json` on standard input and prints what
// a person wants from a test run: one line per test with its verdict and
// time (as -v does, without the noise), the whole output of every failed
// test (and subtest), the tests still running when their package ended (a
// timeout or a crash: the panic that says which), and at the end the
// skipped tests (NOT RUN) with the reason each gave, so that a green run
// says what it did not run. It exits 1 when a test or package failed, or
// when the input ends before every package reported (a crashed or killed
// test binary).
//
//	go test -json ./... | go run ./internal/tools/testsum
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (see go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	output := map[key]*strings.Builder{}
	var skipped []string
	failed, passed := 0, 0
	started, ended := map[string]bool{}, map[string]bool{}
	running := map[string]map[string]bool{} // package → tests without a verdict yet
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // build errors come as plain text
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "start":
			started[e.Package] = true
		case "run":
			if running[e.Package] == nil {
				running[e.Package] = map[string]bool{}
			}
			running[e.Package][e.Test] = true
		case "output":
			if output[k] == nil {
				output[k] = &strings.Builder{}
			}
			output[k].WriteString(e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				ended[e.Package] = true
				switch e.Action {
				case "fail":
					failed++
					failed += unfinished(out, e.Package, running[e.Package], output)
					fmt.Fprintf(out, "FAIL %s (%.1fs)\n%s", e.Package, e.Elapsed, clip(text(output[k])))
				case "skip":
					fmt.Fprintf(out, "--   %s (no tests)\n", e.Package)
				default:
					fmt.Fprintf(out, "ok   %s (%.1fs)\n", e.Package, e.Elapsed)
				}
				continue
			}
			delete(running[e.Package], e.Test)
			if strings.Contains(e.Test, "/") {
				if e.Action == "fail" {
					fmt.Fprintf(out, "    --- FAIL: %s (%.2fs)\n%s", e.Test, e.Elapsed, indent(clip(text(output[k]))))
				}
				continue
			}
			switch e.Action {
			case "pass":
				passed++
				fmt.Fprintf(out, "    --- PASS: %s (%.2fs)\n", e.Test, e.Elapsed)
			case "skip":
				reason := skipReason(text(output[k]))
				skipped = append(skipped, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason))
				fmt.Fprintf(out, "    --- SKIP: %s: %s\n", e.Test, reason)
			case "fail":
				failed++
				fmt.Fprintf(out, "    --- FAIL: %s (%.2fs)\n%s", e.Test, e.Elapsed, indent(clip(text(output[k]))))
			}
		}
	}
	for pkg := range started {
		if !ended[pkg] {
			failed++
			fmt.Fprintf(out, "FAIL %s: the test binary ended without a verdict\n", pkg)
		}
	}
	sort.Strings(skipped)
	fmt.Fprintf(out, "\n%d tests passed, %d failed, %d NOT RUN (skipped):\n", passed, failed, len(skipped))
	for _, s := range skipped {
		fmt.Fprintf(out, "  NOT RUN %s\n", s)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// unfinished prints the tests of pkg that had no verdict when the package
// ended (a -timeout panic or a crash ends the binary mid-test; test2json
// files the panic under the test that was running) and returns how many.
func unfinished(out io.Writer, pkg string, running map[string]bool, output map[key]*strings.Builder) int {
	names := make([]string, 0, len(running))
	for name := range running {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(out, "    --- NO VERDICT: %s (still running when %s ended: timed out or crashed)\n%s",
			name, pkg, indent(clip(text(output[key{pkg, name}]))))
	}
	return len(names)
}

// clipLines bounds what one test's output may print: a timeout's goroutine
// dump runs to thousands of lines, and its head (the panic, the running
// tests) and tail matter.
const clipLines = 80

func clip(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= 2*clipLines {
		return s
	}
	head, tail := lines[:clipLines], lines[len(lines)-clipLines:]
	return strings.Join(head, "\n") + fmt.Sprintf("\n... %d lines left out ...\n", len(lines)-2*clipLines) + strings.Join(tail, "\n") + "\n"
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// skipReason is the line a skipped test gave its reason on: the last one
// that says NOT RUN (this repository's skip messages do), else the last line
// it logged — a cleanup may log after the skip (where it kept evidence).
func skipReason(out string) string {
	var last, marked string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		last = l
		if strings.Contains(l, "NOT RUN") {
			marked = l
		}
	}
	if marked != "" {
		last = marked
	}
	if _, after, ok := strings.Cut(last, ": "); ok && strings.Contains(last, ".go:") {
		last = after
	}
	if last == "" {
		return "no reason given"
	}
	return last
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("        " + l + "\n")
	}
	return b.String()
}
