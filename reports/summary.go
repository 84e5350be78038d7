// Package reports writes what a run found, for the three places people read
// it: a CI job (exit code, JUnit), an engineer's terminal, and a release
// qualification report. summary.json is the machine-readable record every
// other form is rendered from, beside the run folders it points at, which
// the reports read (through package evidence, which owns their layout) and
// never write.
package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/storecheck/storecheck/evidence"
)

// Verdict is the outcome of one backend × scenario run.
type Verdict string

const (
	// Pass: every check ran and held.
	Pass Verdict = "PASS"
	// Fail: a check ran and found a broken guarantee.
	Fail Verdict = "FAIL"
	// NotRun: the run could not start (no server, no image, no Docker); the
	// reason says why. Never counted as a pass.
	NotRun Verdict = "NOT RUN"
	// Interrupted: the run was stopped (Ctrl-C) before it could decide.
	Interrupted Verdict = "INTERRUPTED"
)

// Summary is summary.json.
type Summary struct {
	Seed    uint64 `json:"seed"`
	Command string `json:"command,omitempty"`
	// Started is when the command began (UTC).
	Started time.Time `json:"started,omitzero"`
	Runs    []Run     `json:"runs"`
}

// Run is one backend × scenario entry of a summary.
type Run struct {
	Backend    string  `json:"backend"`
	Scenario   string  `json:"scenario"`
	Verdict    Verdict `json:"verdict"`
	Reason     string  `json:"reason,omitempty"`
	Seed       uint64  `json:"seed"`
	Reproduce  string  `json:"reproduce"`
	DurationMS int64   `json:"duration_ms"`
	Ops        int64   `json:"ops"`
	// Guarantee names the broken guarantee on FAIL.
	Guarantee string `json:"guarantee,omitempty"`
	// Cases is the number of property test cases (conformance).
	Cases int64 `json:"cases,omitempty"`
	// SequenceDigest identifies the operation sequence, where it is a pure
	// function of the seed (conformance): equal seeds, equal digests.
	SequenceDigest string `json:"sequence_digest,omitempty"`
	// MinimalSteps is the shrunk failing sequence (conformance).
	MinimalSteps []string `json:"minimal_steps,omitempty"`
	// Dir is the run's own folder, relative to the summary.
	Dir string `json:"dir,omitempty"`
	// Metrics holds scenario-specific figures (conflict rate, checker time…).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Options are the scenario options the run used, for replay.
	Options map[string]string `json:"options,omitempty"`
	// Latency is per operation kind, plus AllKinds, from the recorded
	// history (see Measure and Metrics.Fill).
	Latency map[string]Percentiles `json:"latency,omitempty"`
	// Throughput is traffic operations per second over the traffic span,
	// heal reads excluded (see Measure).
	Throughput float64 `json:"throughput_ops_per_sec,omitempty"`
	// Servers are the servers the run ran against, as they describe
	// themselves (e.g. "sqld 0.24.32 (40c272de 2026-05-10), sqld process,
	// …").
	Servers []string `json:"servers,omitempty"`
}

// ExitCode is what a command that produced s exits with: 0 when every run
// passed, 1 when any failed or was interrupted, or (with failOnNotRun) was
// not run.
func (s *Summary) ExitCode(failOnNotRun bool) int {
	code := 0
	for _, r := range s.Runs {
		switch r.Verdict {
		case Fail, Interrupted:
			code = 1
		case NotRun:
			if failOnNotRun {
				code = 1
			}
		}
	}
	return code
}

// WriteJSON writes v as indented JSON to path atomically: a reader never sees
// a half-written file, and a failed write leaves no file claiming anything.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return evidence.WriteFileAtomic(path, append(b, '\n'))
}

// ReadSummary reads a summary.json.
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read summary %s: not a storecheck summary: %w", path, err)
	}
	return &s, nil
}
