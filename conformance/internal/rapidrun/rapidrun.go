// Package rapidrun runs a rapid property outside `go test`, for the
// conformance suites' Check (what the CLI calls): it points rapid at a seed
// and a budget, captures everything rapid and the property log through a
// rapid.TB of its own, and picks out the failure and the minimal failing
// sequence. Both conformance suites (the execution store's and the run
// store's) run their state machines through it.
package rapidrun

import (
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Config sets how the property runs.
type Config struct {
	Name       string        // the name rapid reports the property under
	Seed       uint64        // rapid's base seed; 0 is not allowed (rapid would pick one at random)
	Checks     int           // test cases to run; 0 means 100
	Steps      int           // average actions per test case; 0 means 30
	ShrinkTime time.Duration // bound on minimisation; 0 means 30s
}

// Outcome is what the run showed.
type Outcome struct {
	Passed bool
	// Failure is rapid's failure message; MinimalSteps the lines the final,
	// shrunk re-run logged: the property's "step: …" lines and the failed
	// comparison that ended it.
	Failure      string
	MinimalSteps []string
	// Output is everything rapid and the property logged.
	Output []string
}

// flags serialises runs: rapid reads its settings from the process's flag set
// (rapid.seed, rapid.checks, …), of which there is one per process.
var flags sync.Mutex

// Run runs prop under cfg. The error is for a run that could not start.
func Run(cfg Config, prop func(*rapid.T)) (Outcome, error) {
	if cfg.Seed == 0 {
		return Outcome{}, fmt.Errorf("%s: seed must be non-zero (rapid treats 0 as random)", cfg.Name)
	}
	flags.Lock()
	defer flags.Unlock()
	restore, err := setFlags(cfg)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	defer restore()
	tb := &captureTB{name: cfg.Name}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errStop {
				tb.Errorf("panic: %v", r)
			}
		}()
		rapid.Check(tb, prop)
	}()
	out := Outcome{Passed: !tb.Failed(), Output: tb.lines}
	if !out.Passed {
		out.Failure, out.MinimalSteps = tb.failure()
	}
	return out, nil
}

// setFlags points rapid at cfg through the process flag set, and returns the
// function that puts the previous values back.
func setFlags(cfg Config) (func(), error) {
	if flag.Lookup("test.v") == nil {
		testing.Init() // rapid calls testing.Short, which needs the test flags
	}
	if !flag.Parsed() {
		if err := flag.CommandLine.Parse(nil); err != nil {
			return nil, err
		}
	}
	want := map[string]string{
		"rapid.seed":       strconv.FormatUint(cfg.Seed, 10),
		"rapid.checks":     strconv.Itoa(orDefault(cfg.Checks, 100)),
		"rapid.steps":      strconv.Itoa(orDefault(cfg.Steps, 30)),
		"rapid.shrinktime": orDefault(cfg.ShrinkTime, 30*time.Second).String(),
		"rapid.nofailfile": "true", // no testdata/rapid folder in the user's directory
	}
	old := map[string]string{}
	for name, v := range want {
		f := flag.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("rapid flag -%s not registered", name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			return nil, fmt.Errorf("set -%s: %w", name, err)
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

// StepCount is the number of operations in a minimal sequence: its lines
// that start with "step: ".
func StepCount(steps []string) int {
	n := 0
	for _, s := range steps {
		if strings.HasPrefix(s, "step: ") {
			n++
		}
	}
	return n
}

// Digest identifies a sequence of steps: each step's description is folded
// in, in order. Two runs with the same seed against correct stores give the
// same digest. The zero value is ready; it is safe for concurrent use.
type Digest struct {
	mu sync.Mutex
	h  hash.Hash64
}

// Record adds one step's description.
func (d *Digest) Record(step string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		d.h = fnv.New64a()
	}
	d.h.Write([]byte(step))
	d.h.Write([]byte{'\n'})
}

// String is the digest in hex, or "" when no step was recorded.
func (d *Digest) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		return ""
	}
	return fmt.Sprintf("%016x", d.h.Sum64())
}
