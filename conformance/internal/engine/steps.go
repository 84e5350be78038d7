package engine

import (
	"fmt"
	"hash"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"

	"pgregory.net/rapid"
)

// stepPrefix starts every step line a state machine logs.
const stepPrefix = "step: "

// Stats counts what the state-machine property did, across test cases.
type Stats struct {
	Cases atomic.Int64 // test cases started
	Ops   atomic.Int64 // store operations compared

	steps digest // every step, in order

	mu   sync.Mutex
	this []string // the steps of the test case now running
}

// Step records one operation of the sequence: it logs "step: " and desc
// (rapid prints what a failing sequence logged; StepCount counts these
// lines) and folds the line into the sequence digest.
func (s *Stats) Step(t *rapid.T, desc string) {
	t.Helper()
	line := stepPrefix + desc
	s.steps.record(line)
	s.mu.Lock()
	s.this = append(s.this, line)
	s.mu.Unlock()
	t.Log(line)
}

// beginCase starts a new test case's steps.
func (s *Stats) beginCase() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.this = nil
}

// CaseSteps returns the steps of the test case now running.
func (s *Stats) CaseSteps() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.this...)
}

// Digest identifies the exact sequence of steps run so far: two runs with the
// same seed against correct stores give the same digest.
func (s *Stats) Digest() string { return s.steps.String() }

// StepCount is the number of operations in a minimal sequence: its lines
// that start with "step: ".
func StepCount(steps []string) int {
	n := 0
	for _, s := range steps {
		if strings.HasPrefix(s, stepPrefix) {
			n++
		}
	}
	return n
}

// digest identifies a sequence of steps: each step's line is folded in, in
// order. The zero value is ready; it is safe for concurrent use.
type digest struct {
	mu sync.Mutex
	h  hash.Hash64
}

// record adds one step's line.
func (d *digest) record(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		d.h = fnv.New64a()
	}
	d.h.Write([]byte(line))
	d.h.Write([]byte{'\n'})
}

// String is the digest in hex, or "" when no step was recorded.
func (d *digest) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		return ""
	}
	return fmt.Sprintf("%016x", d.h.Sum64())
}
