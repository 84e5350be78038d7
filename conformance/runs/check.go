package runs

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// CheckConfig sets how the property runs outside `go test`.
type CheckConfig struct {
	Seed       uint64        // rapid's base seed; 0 is not allowed (rapid would pick one at random)
	Checks     int           // test cases to run; 0 means 100
	Steps      int           // average actions per test case; 0 means 30
	ShrinkTime time.Duration // bound on minimisation; 0 means 30s
	// Stats, when set, receives the live counts (for a progress display).
	Stats *Stats
}

// Report is the outcome of Check.
type Report struct {
	Passed bool
	Cases  int64 // test cases started, including shrinking re-runs
	Ops    int64 // store operations compared
	// Digest identifies the sequence of steps that ran.
	Digest string
	// Failure is rapid's failure message; MinimalSteps the shrunk sequence,
	// one "step: …" line per operation, ending with the failed comparison.
	Failure      string
	MinimalSteps []string
	// Output is everything rapid and the property logged.
	Output []string
}

// rapidFlags serialises Check within this package: rapid reads its
// settings from the process's flag set.
//
// Decision: this and captureTB below are copied from package conformance
// (its Check is the execution store's), not shared through new exports, so
// that the two suites stay independent. The two Checks must not run at the
// same time in one process; storecheck runs scenarios one after another.
var rapidFlags sync.Mutex

// Check runs the state-machine property against stores from open, outside
// `go test`. The same seed gives the same sequences. The error reports a
// harness failure (the property could not run), not a failed check.
func Check(ctx context.Context, open Opener, cfg CheckConfig) (Report, error) {
	if cfg.Seed == 0 {
		return Report{}, fmt.Errorf("run-store conformance check: seed must be non-zero (rapid treats 0 as random)")
	}
	rapidFlags.Lock()
	defer rapidFlags.Unlock()
	restore, err := setRapidFlags(cfg)
	if err != nil {
		return Report{}, err
	}
	defer restore()
	h := NewHarness(open)
	defer h.Close()
	stats := cfg.Stats
	if stats == nil {
		stats = &Stats{}
	}
	tb := &captureTB{name: "runs-conformance"}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errStop {
				tb.Errorf("panic: %v", r)
			}
		}()
		rapid.Check(tb, Property(ctx, h, stats))
	}()
	rep := Report{Passed: !tb.Failed(), Cases: stats.Cases.Load(), Ops: stats.Ops.Load(), Digest: stats.Digest(), Output: tb.lines}
	if !rep.Passed {
		rep.Failure, rep.MinimalSteps = tb.failure()
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("run-store conformance check interrupted: %w", err)
	}
	return rep, nil
}

// setRapidFlags points rapid at cfg through the process flag set, and
// returns the function that puts the previous values back.
func setRapidFlags(cfg CheckConfig) (func(), error) {
	if flag.Lookup("test.v") == nil {
		testing.Init() // rapid calls testing.Short, which needs the test flags
	}
	if !flag.Parsed() {
		if err := flag.CommandLine.Parse(nil); err != nil {
			return nil, fmt.Errorf("run-store conformance check: %w", err)
		}
	}
	want := map[string]string{
		"rapid.seed":       strconv.FormatUint(cfg.Seed, 10),
		"rapid.checks":     strconv.Itoa(orDefault(cfg.Checks, 100)),
		"rapid.steps":      strconv.Itoa(orDefault(cfg.Steps, 30)),
		"rapid.shrinktime": orDefault(cfg.ShrinkTime, 30*time.Second).String(),
		"rapid.nofailfile": "true",
	}
	old := map[string]string{}
	for name, v := range want {
		f := flag.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("run-store conformance check: rapid flag -%s not registered", name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			return nil, fmt.Errorf("run-store conformance check: set -%s: %w", name, err)
		}
	}
	return func() {
		for name, v := range old {
			_ = flag.Set(name, v)
		}
	}, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// errStop is what captureTB panics with to end the run, as testing.T's
// FailNow ends a test goroutine.
var errStop = fmt.Errorf("run-store conformance: stop")

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

// failure extracts rapid's failure message and the minimal sequence: the
// "step:" lines logged by the final, shrunk re-run, and the failed
// comparison that ended it.
func (c *captureTB) failure() (string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := -1
	for i, l := range c.lines {
		if strings.HasSuffix(l, "Failed test output:") {
			start = i
		}
	}
	msg := ""
	for _, l := range c.lines {
		if strings.HasPrefix(l, "[rapid] failed") || strings.HasPrefix(l, "[rapid] panic") || strings.HasPrefix(l, "[rapid] flaky") {
			msg = l
			break
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

// StepCount is the number of operations in a minimal sequence.
func StepCount(steps []string) int {
	n := 0
	for _, s := range steps {
		if strings.HasPrefix(s, "step: ") {
			n++
		}
	}
	return n
}
