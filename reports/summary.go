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
	"strings"
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
	// Schema is SchemaVersion when the summary was written.
	Schema  int    `json:"schema,omitempty"`
	Seed    uint64 `json:"seed"`
	Command string `json:"command,omitempty"`
	// Started and Finished are when the command began and ended (UTC).
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Verdict is the overall verdict: the runs' (Overall) under the gate
	// (Judge), never PASS where the gate failed; Counts the runs per
	// verdict. A summary made before Judge may say PASS where a NOT RUN
	// failed its gate: Gate.ExitCode is what CI saw.
	Verdict Verdict         `json:"verdict,omitempty"`
	Counts  map[Verdict]int `json:"counts,omitempty"`
	// Storecheck and Host say which binary made the summary, and where.
	Storecheck *Build `json:"storecheck,omitempty"`
	Host       *Host  `json:"host,omitempty"`
	// Gate is what the exit code says and why, in words ("GATE FAILED:
	// 3 NOT RUN under --fail-on-not-run"); every rendering shows it.
	Gate *Gate `json:"gate,omitempty"`
	// Out is the output folder as the command was given it (or chose it):
	// the embedded default's databases live under it, so that diff and
	// merge can tell a path of the run's own from a user's.
	Out string `json:"out,omitempty"`
	// Shard, on a summary of one shard of a plan (--shard K/N), says which;
	// storecheck merge combines the N shards into the whole plan's.
	Shard *Shard `json:"shard,omitempty"`
	// Parallel says how many runs went at once: timed runs' figures
	// (throughput, latency, time to catch) are those of a machine they
	// shared with that many others, so they compare only with a summary
	// made at the same setting (diff says so).
	Parallel *Parallel `json:"parallel,omitempty"`
	Runs     []Run     `json:"runs"`
}

// Parallel is how many runs a plan let go at once: Runs of any kind, and
// timed runs only while the cores they keep busy fit in TimedCores, or
// in InProcessCores while every run going is on an in-process store. 1
// and 1 is one after another.
type Parallel struct {
	Runs       int `json:"runs"`
	TimedCores int `json:"timed_cores"`
	// InProcessCores, when above TimedCores, is the overcommitted budget of
	// timed runs on in-process stores; absent in summaries made before it.
	InProcessCores float64 `json:"in_process_cores,omitempty"`
}

// String is "1 run at a time", "2 runs at once, timed runs one at a
// time", "2 runs at once, timed runs within 2 cores" or "…, timed runs
// within 2 cores (3 on in-process stores)".
func (p Parallel) String() string {
	if p.Runs <= 1 {
		return "1 run at a time"
	}
	if p.TimedCores <= 1 && p.InProcessCores <= 1 {
		return fmt.Sprintf("%d runs at once, timed runs one at a time", p.Runs)
	}
	cores := "cores"
	if p.TimedCores == 1 {
		cores = "core"
	}
	s := fmt.Sprintf("%d runs at once, timed runs within %d %s", p.Runs, p.TimedCores, cores)
	if p.InProcessCores > float64(p.TimedCores) {
		s += fmt.Sprintf(" (%g on in-process stores)", p.InProcessCores)
	}
	return s
}

// Shard is one slice of a plan: shard K of N holds the runs whose position
// in the whole plan (from 1) is K, K+N, K+2N, …
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
	// Plan is how many runs the whole plan has.
	Plan int `json:"plan"`
	// PlanDigest identifies the whole, unsharded plan: every backend ×
	// scenario pair in order with its seed, and the options that change
	// what the runs do (runner.PlanDigest). The N shards of one plan carry
	// the same; storecheck merge refuses shards that differ, or that
	// carry none (made before it was recorded).
	PlanDigest string `json:"plan_digest,omitempty"`
}

// Position is the number of s.Runs[i] as the reports and its folder
// (runs/NN-…) number it: its position in the whole plan on a shard's or a
// merged summary (Run.Index), else its place in Runs, from 1.
func (s *Summary) Position(i int) int {
	if n := s.Runs[i].Index; n > 0 {
		return n
	}
	return i + 1
}

// Holds reports whether position i (from 1) of the plan is in the shard.
func (s Shard) Holds(i int) bool { return (i-1)%s.N == s.K-1 }

// Run is one backend × scenario entry of a summary.
type Run struct {
	Backend string `json:"backend"`
	// Subject names what the run checks where the backend URL does not say
	// it (a mutant of the catalogue).
	Subject  string `json:"subject,omitempty"`
	Scenario string `json:"scenario"`
	// Index is the run's position (from 1) in the whole plan, on a shard's
	// summary and on the merged one; 0 elsewhere (the position is its
	// place in Runs).
	Index   int     `json:"index,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Expect, when FAIL, marks a run of a deliberately broken store (a
	// mutant of storecheck mutants): its FAIL is the expected outcome,
	// the mutant caught, and the mutant survived when no run of its
	// subject FAILed (Outcomes). Absent on every other run.
	Expect     Verdict `json:"expect,omitempty"`
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
	// Beside lists the positions (from 1, as run folders are numbered) of
	// the runs that ran at some time beside this one, when the plan let
	// runs go side by side: its figures are those of a run that shared the
	// machine with them. A replay runs alone.
	Beside []int `json:"beside,omitempty"`
	// KnownIssue names the confirmed upstream bug a FAIL's evidence shows
	// (docs/KNOWN-ISSUES.md); a gate may accept it.
	KnownIssue string `json:"known_issue,omitempty"`
	// NotApplicable marks a NOT RUN whose scenario does not apply to the
	// backend (it needs a capability the backend lacks): shown and counted
	// apart, it never fails a gate.
	NotApplicable bool `json:"not_applicable,omitempty"`
	// Replay, on a run made by `storecheck replay`, compares it with the
	// run it repeats.
	Replay *Replay `json:"replay,omitempty"`
}

// Replay says whether a replayed run reproduced the original: the same
// plan (sequence or schedule digest) and the same verdict.
type Replay struct {
	// Of names the original: the summary it came from and its position.
	Of string `json:"of"`
	// WasVerdict and WasDigest are the original's.
	WasVerdict Verdict `json:"was_verdict"`
	WasDigest  string  `json:"was_digest,omitempty"`
	// WasBeside is how many runs the original ran beside (Run.Beside); a
	// replay runs alone.
	WasBeside int `json:"was_beside,omitempty"`
	// SamePlan is true when both digests exist and are equal; SameVerdict
	// when the verdicts are.
	SamePlan    bool `json:"same_plan"`
	SameVerdict bool `json:"same_verdict"`
	// Unfinished is the replay's own verdict when it is NOT RUN or
	// INTERRUPTED: it ran no plan, so none is compared.
	Unfinished Verdict `json:"unfinished,omitempty"`
}

// CompareReplay fills r.Replay from the original run it repeats.
func (r *Run) CompareReplay(of string, orig Run) {
	r.Replay = &Replay{Of: of, WasVerdict: orig.Verdict, WasDigest: orig.SequenceDigest, WasBeside: len(orig.Beside),
		SamePlan:    orig.SequenceDigest != "" && orig.SequenceDigest == r.SequenceDigest,
		SameVerdict: orig.Verdict == r.Verdict}
	if r.Verdict == NotRun || r.Verdict == Interrupted {
		r.Replay.Unfinished = r.Verdict
	}
}

// String says in a line whether the replay reproduced the original.
func (p Replay) String() string {
	switch {
	case p.Unfinished != "":
		return fmt.Sprintf("not reproduced: the replay is %s, so it shows nothing of the plan or the verdict; the original was %s", p.Unfinished, p.WasVerdict)
	case p.SamePlan && p.SameVerdict:
		return fmt.Sprintf("reproduced: same plan (%s), same verdict (%s)", p.WasDigest, p.WasVerdict)
	case p.SamePlan && p.WasBeside > 0:
		return fmt.Sprintf("same plan (%s), but the verdict differs: was %s (timing, not the plan, decides this run; the original ran beside %d other run(s), the replay alone)", p.WasDigest, p.WasVerdict, p.WasBeside)
	case p.SamePlan:
		return fmt.Sprintf("same plan (%s), but the verdict differs: was %s (timing, not the plan, decides this run)", p.WasDigest, p.WasVerdict)
	case p.WasDigest == "":
		return fmt.Sprintf("the original recorded no plan digest; verdict was %s", p.WasVerdict)
	default:
		return fmt.Sprintf("not reproduced: the plan differs (was %s; a different storecheck or settings?), verdict was %s", p.WasDigest, p.WasVerdict)
	}
}

// exitCode is the gate's exit code before its command's own rules
// (Decide): 0 when every run passed, 1 when any failed (unless acceptKnown
// and a known issue explains it) or was interrupted, or (with
// failOnNotRun) was not run, and 1 when nothing was checked at all
// (NothingChecked): a gate that checked nothing has not passed, whatever
// its NOT RUN policy.
func (s *Summary) exitCode(failOnNotRun, acceptKnown bool) int {
	if s.NothingChecked() {
		return ExitFailed
	}
	code := ExitPassed
	for _, r := range s.Runs {
		switch r.Verdict {
		case Fail:
			if !acceptKnown || r.KnownIssue == "" {
				code = ExitFailed
			}
		case Interrupted:
			code = ExitFailed
		case NotRun:
			if failOnNotRun && !r.NotApplicable {
				code = ExitFailed
			}
		}
	}
	return code
}

// CouldNotRun is the first run that was NOT RUN though it applies (its
// backend could not be started, say), or nil.
func (s *Summary) CouldNotRun() *Run {
	for i, r := range s.Runs {
		if r.Verdict == NotRun && !r.NotApplicable {
			return &s.Runs[i]
		}
	}
	return nil
}

// NothingChecked says s holds runs and none of them checked anything:
// every one is NOT RUN (could not start, or does not apply). A summary with
// no runs at all (an empty shard) checked nothing either, but claims
// nothing: it is not counted here.
func (s *Summary) NothingChecked() bool {
	if len(s.Runs) == 0 {
		return false
	}
	for _, r := range s.Runs {
		if r.Verdict != NotRun {
			return false
		}
	}
	return true
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

// ReadSummary reads a summary.json and checks that it is one (ParseSummary).
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	s, err := ParseSummary(b)
	if err != nil {
		return nil, fmt.Errorf("read summary %s: not a storecheck summary: %w", path, err)
	}
	return s, nil
}

// ParseSummary decodes the text of a summary.json. It is one when it is a
// JSON object of Summary's layout whose schema version is SchemaVersion (a
// summary older than the version field has none), holding the fields
// docs/summary.schema.json requires: seed and runs, and on each run
// backend, scenario, verdict, seed, reproduce, duration_ms and ops, with a
// verdict storecheck writes. Anything else ({}, another program's JSON, a
// layout of another version) is an error, so that no command reads it as a
// summary of no runs.
func ParseSummary(b []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if s.Schema != 0 && s.Schema != SchemaVersion {
		return nil, fmt.Errorf("schema version %d, this storecheck reads version %d", s.Schema, SchemaVersion)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	if err := requireKeys(top, "seed", "runs"); err != nil {
		return nil, err
	}
	if s.Verdict != "" && !s.Verdict.known() {
		return nil, fmt.Errorf("unknown verdict %q", s.Verdict)
	}
	var runs []map[string]json.RawMessage
	if err := json.Unmarshal(top["runs"], &runs); err != nil {
		return nil, err
	}
	for i, r := range runs {
		if err := requireKeys(r, "backend", "scenario", "verdict", "seed", "reproduce", "duration_ms", "ops"); err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		if v := s.Runs[i].Verdict; !v.known() {
			return nil, fmt.Errorf("run %d: unknown verdict %q", i+1, v)
		}
		if x := s.Runs[i].Expect; x != "" && x != Fail {
			return nil, fmt.Errorf("run %d: expect %q: only %q is an expectation", i+1, x, Fail)
		}
	}
	return &s, nil
}

// IsSummary reports whether b is a summary.json storecheck wrote, of this
// schema version or of another: one ParseSummary reads, or a JSON object
// whose "schema" names a version by a positive integer (docs/
// summary.schema.json: the layout version) beside the "seed" and "runs"
// every version has had. It is for a command that clears an earlier
// report (an older storecheck's too) and must leave another program's
// file alone; what is read as a summary goes through ParseSummary.
func IsSummary(b []byte) bool {
	if _, err := ParseSummary(b); err == nil {
		return true
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return false
	}
	var version int
	if err := json.Unmarshal(top["schema"], &version); err != nil || version < 1 {
		return false
	}
	return requireKeys(top, "seed", "runs") == nil
}

// requireKeys says which of names obj lacks.
func requireKeys(obj map[string]json.RawMessage, names ...string) error {
	var missing []string
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no %s field", strings.Join(missing, ", "))
	}
	return nil
}

// known reports whether v is one of the verdicts storecheck writes.
func (v Verdict) known() bool {
	return v == Pass || v == Fail || v == NotRun || v == Interrupted
}
