package rapidrun

import (
	"fmt"
	"strings"
	"sync"

	"pgregory.net/rapid"
)

// errStop is what captureTB panics with to end the run, as testing.T's
// FailNow ends a test goroutine.
var errStop = fmt.Errorf("rapidrun: stop")

// captureTB is a rapid.TB that keeps everything logged.
type captureTB struct {
	name   string
	mu     sync.Mutex
	lines  []string
	failed bool
}

func (c *captureTB) Helper()      {}
func (c *captureTB) Name() string { return c.name }
func (c *captureTB) log(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, strings.Split(strings.TrimRight(s, "\n"), "\n")...)
}
func (c *captureTB) Logf(format string, args ...any) { c.log(fmt.Sprintf(format, args...)) }
func (c *captureTB) Log(args ...any)                 { c.log(fmt.Sprint(args...)) }
func (c *captureTB) Errorf(format string, args ...any) {
	c.log(fmt.Sprintf(format, args...))
	c.Fail()
}
func (c *captureTB) Error(args ...any) { c.log(fmt.Sprint(args...)); c.Fail() }
func (c *captureTB) Fatalf(format string, args ...any) {
	c.Errorf(format, args...)
	c.FailNow()
}
func (c *captureTB) Fatal(args ...any) { c.Error(args...); c.FailNow() }
func (c *captureTB) FailNow()          { c.Fail(); panic(errStop) }
func (c *captureTB) Skipf(format string, args ...any) {
	c.log(fmt.Sprintf(format, args...))
	c.SkipNow()
}
func (c *captureTB) Skip(args ...any) { c.log(fmt.Sprint(args...)); c.SkipNow() }
func (c *captureTB) SkipNow()         { panic(errStop) }
func (c *captureTB) Fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
}
func (c *captureTB) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// failure extracts rapid's failure message and the minimal sequence: what the
// final, shrunk re-run logged after rapid's "Failed test output:" line, less
// rapid's own draw lines.
func (c *captureTB) failure() (string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	msg := ""
	for _, l := range c.lines {
		if strings.HasPrefix(l, "[rapid] failed") || strings.HasPrefix(l, "[rapid] panic") || strings.HasPrefix(l, "[rapid] flaky") {
			msg = l
			break
		}
	}
	start := -1
	for i, l := range c.lines {
		if strings.HasSuffix(l, "Failed test output:") {
			start = i
		}
	}
	if start < 0 {
		return msg, nil
	}
	var steps []string
	for _, l := range c.lines[start+1:] {
		if !strings.HasPrefix(l, "[rapid] ") {
			steps = append(steps, l)
		}
	}
	return msg, steps
}

// probeLine is what reaches logs to find out whether a run logs to the TB;
// it is dropped from the output.
const probeLine = "rapidrun: probe"

// reaches reports whether what t logs reaches c: true only in the runs
// rapid makes to show a failure's output, not in shrinking candidates.
func (c *captureTB) reaches(t *rapid.T) bool {
	c.mu.Lock()
	n := len(c.lines)
	c.mu.Unlock()
	t.Log(probeLine)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lines) > n && c.lines[len(c.lines)-1] == probeLine {
		c.lines = c.lines[:len(c.lines)-1]
		return true
	}
	return false
}
