package reports

import (
	"strings"
	"testing"
)

// A known issue's FAIL fails the exit code unless the gate accepts known
// issues; any other FAIL always does.
func TestExitCodeAcceptKnown(t *testing.T) {
	known := &Summary{Runs: []Run{{Verdict: Pass}, {Verdict: Fail, KnownIssue: "x"}}}
	other := &Summary{Runs: []Run{{Verdict: Fail, KnownIssue: "x"}, {Verdict: Fail}}}
	for _, c := range []struct {
		s      *Summary
		accept bool
		want   int
	}{{known, false, 1}, {known, true, 0}, {other, true, 1}} {
		if got := Decide(c.s, Policy{AcceptKnown: c.accept}).ExitCode; got != c.want {
			t.Errorf("accept=%v: exit %d, want %d (%+v)", c.accept, got, c.want, c.s.Runs)
		}
	}
}

// TestReplaySaysTheOriginalHadNeighbours: a replay whose verdict differs
// says that the original ran beside other runs, when it did.
func TestReplaySaysTheOriginalHadNeighbours(t *testing.T) {
	orig := Run{Verdict: Fail, SequenceDigest: "d1", Beside: []int{2, 5}}
	r := Run{Verdict: Pass, SequenceDigest: "d1"}
	r.CompareReplay("summary.json#1", orig)
	if got := r.Replay.String(); !strings.Contains(got, "beside 2 other run(s), the replay alone") {
		t.Errorf("replay of a run that had neighbours: %q", got)
	}
	orig.Beside = nil
	r.CompareReplay("summary.json#1", orig)
	if got := r.Replay.String(); strings.Contains(got, "beside") {
		t.Errorf("replay of a run alone: %q", got)
	}
}

// TestParseSummary: a summary of this schema version, or one older than the
// version field, is read; a summary of another version, or JSON lacking the
// fields the schema requires, is not.
func TestParseSummary(t *testing.T) {
	run := `{"backend":"memory:","scenario":"conformance","verdict":"PASS","seed":1,"reproduce":"x","duration_ms":1,"ops":1}`
	for _, ok := range []string{
		`{"schema":2,"seed":1,"runs":[` + run + `]}`,
		`{"seed":1,"runs":[` + run + `]}`,
		`{"seed":1,"runs":[]}`,
		`{"seed":1,"runs":null}`,
	} {
		if _, err := ParseSummary([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for body, want := range map[string]string{
		`{}`:                                  `no "seed", "runs" field`,
		`{"a":1}`:                             `no "seed", "runs" field`,
		`{"schema":99,"runs":[]}`:             "schema version 99, this storecheck reads version 2",
		`{"seed":1,"runs":[{}]}`:              `run 1: no "backend", "scenario", "verdict", "seed", "reproduce", "duration_ms", "ops" field`,
		`{"seed":1,"verdict":"OK","runs":[]}`: `unknown verdict "OK"`,
		`{"seed":1,"runs":[` + strings.Replace(run, "PASS", "", 1) + `]}`: `run 1: unknown verdict ""`,
		`"x"`: "cannot unmarshal",
	} {
		if _, err := ParseSummary([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", body, err, want)
		}
	}
}

// IsSummary knows a storecheck summary of any schema version, and nothing
// else: an older or newer layout is still storecheck's (a command clearing
// an earlier report removes it), another program's JSON is not.
func TestIsSummary(t *testing.T) {
	for body, want := range map[string]bool{
		`{"schema":2,"seed":1,"runs":[]}`:          true,
		`{"seed":1,"runs":[]}`:                     true,
		`{"schema":1,"seed":1,"runs":[{"x":1}]}`:   true,
		`{"schema":99,"seed":1,"runs":[]}`:         true,
		`{"schema":1}`:                             false,
		`{"schema":0,"seed":1,"runs":[{"x":1}]}`:   false,
		`{"schema":"1","seed":1,"runs":[{"x":1}]}`: false,
		`{"not":"storecheck"}`:                     false,
		`[1,2]`:                                    false,
		`not json`:                                 false,
	} {
		if got := IsSummary([]byte(body)); got != want {
			t.Errorf("IsSummary(%s) = %v, want %v", body, got, want)
		}
	}
}

// A summary without runs passes no gate: its headline says nothing ran
// (and, for a shard, why), though its exit code is 0.
func TestGateOfNothingRan(t *testing.T) {
	shard := &Summary{Seed: 4, Shard: &Shard{K: 3, N: 3, Plan: 2}}
	if g := Decide(shard, Policy{}); g.ExitCode != 0 || g.Headline != "NOTHING RAN: shard 3/3 of a 2-run plan holds no run (not a failure)" {
		t.Errorf("empty shard: %+v", g)
	}
	if g := Decide(&Summary{Seed: 4}, Policy{}); g.Headline != "NOTHING RAN: the plan holds no run" {
		t.Errorf("empty plan: %+v", g)
	}
	if g := Decide(&Summary{Seed: 4, Runs: []Run{{Verdict: Pass}}}, Policy{}); g.Headline != "PASS" {
		t.Errorf("a pass: %+v", g)
	}
}

// TestDecide: every policy's exit code and headline, worked out together.
func TestDecide(t *testing.T) {
	pass := Run{Verdict: Pass}
	fail := Run{Verdict: Fail}
	known := Run{Verdict: Fail, KnownIssue: "raft-heartbeat-term-race"}
	notRun := Run{Verdict: NotRun, Reason: "no rqlited"}
	notApplicable := Run{Verdict: NotRun, NotApplicable: true}
	interrupted := Run{Verdict: Interrupted}
	underFlag := Policy{NotRun: NotRunFailsUnderFlag}
	run := Policy{NotRun: NotRunFailsRun}
	for _, c := range []struct {
		name     string
		runs     []Run
		p        Policy
		code     int
		headline string
	}{
		{"all pass", []Run{pass, pass}, Policy{}, 0, "PASS"},
		{"a fail", []Run{pass, fail}, Policy{}, 1, "GATE FAILED: 1 FAIL"},
		{"a known issue", []Run{pass, known}, Policy{}, 1, "GATE FAILED: 1 FAIL"},
		{"a known issue, accepted", []Run{pass, known}, Policy{AcceptKnown: true}, 0, "PASS (1 FAIL accepted as known upstream issues)"},
		{"a not run, qualify", []Run{pass, notRun}, Policy{}, 0, "PASS (1 NOT RUN (not failing the gate))"},
		{"a not run, --fail-on-not-run", []Run{pass, notRun}, underFlag, 1, "GATE FAILED: 1 NOT RUN under --fail-on-not-run"},
		{"not applicable, --fail-on-not-run", []Run{pass, notApplicable}, underFlag, 0, "PASS (1 not applicable)"},
		{"a not run, run", []Run{pass, notRun}, run, 2, "GATE FAILED: 1 NOT RUN (a run asked for could not happen)"},
		{"a fail and a not run, run", []Run{fail, notRun}, run, 1, "GATE FAILED: 1 FAIL, 1 NOT RUN (a run asked for could not happen)"},
		{"nothing checked, qualify", []Run{notRun}, Policy{}, 1, "GATE FAILED: nothing was checked (every run NOT RUN) (1 NOT RUN)"},
		{"nothing applied, run", []Run{notApplicable}, run, 2, "GATE FAILED: nothing was checked (every run NOT RUN) (1 not applicable)"},
		{"an interrupted run", []Run{pass, interrupted}, Policy{}, 1, "GATE FAILED: 1 INTERRUPTED"},
		{"the command interrupted", []Run{pass, interrupted}, Policy{Interrupted: true}, 130, "GATE FAILED: 1 INTERRUPTED"},
	} {
		g := Decide(&Summary{Seed: 1, Runs: c.runs}, c.p)
		if g.ExitCode != c.code || g.Headline != c.headline {
			t.Errorf("%s: exit %d %q; want %d %q", c.name, g.ExitCode, g.Headline, c.code, c.headline)
		}
	}
}

// TestReplayThatDidNotRunComparesNothing: a replay that is NOT RUN (no
// server on the engineer's machine) or INTERRUPTED ran no plan: it says
// so, not that the plan differs from the original's.
func TestReplayThatDidNotRunComparesNothing(t *testing.T) {
	orig := Run{Verdict: Fail, SequenceDigest: "d1"}
	for _, v := range []Verdict{NotRun, Interrupted} {
		r := Run{Verdict: v}
		r.CompareReplay("summary.json#1", orig)
		got := r.Replay.String()
		if !strings.Contains(got, "the replay is "+string(v)) || strings.Contains(got, "plan differs") {
			t.Errorf("a replay %s: %q", v, got)
		}
	}
}

// TestJudgeNeverPassesAFailedGate: the summary's verdict follows the gate
// where the runs alone would say PASS (a NOT RUN the rule fails, the
// command interrupted), and keeps what the runs found otherwise.
func TestJudgeNeverPassesAFailedGate(t *testing.T) {
	pass := Run{Verdict: Pass}
	known := Run{Verdict: Fail, KnownIssue: "raft-heartbeat-term-race"}
	notRun := Run{Verdict: NotRun, Reason: "no rqlited"}
	notApplicable := Run{Verdict: NotRun, NotApplicable: true}
	for _, c := range []struct {
		name string
		runs []Run
		p    Policy
		want Verdict
	}{
		{"all pass", []Run{pass}, Policy{}, Pass},
		{"a not run, qualify", []Run{pass, notRun}, Policy{}, Pass},
		{"a not run, --fail-on-not-run", []Run{pass, notRun}, Policy{NotRun: NotRunFailsUnderFlag}, NotRun},
		{"a not run, run", []Run{pass, notRun}, Policy{NotRun: NotRunFailsRun}, NotRun},
		{"not applicable, --fail-on-not-run", []Run{pass, notApplicable}, Policy{NotRun: NotRunFailsUnderFlag}, Pass},
		{"interrupted after the runs", []Run{pass}, Policy{Interrupted: true}, Interrupted},
		{"a known issue, accepted", []Run{pass, known}, Policy{AcceptKnown: true}, Fail},
		{"nothing checked", []Run{notRun}, Policy{}, NotRun},
	} {
		s := &Summary{Seed: 1, Runs: c.runs}
		s.Judge(c.p)
		if s.Verdict != c.want {
			t.Errorf("%s: verdict %s (gate exit %d); want %s", c.name, s.Verdict, s.Gate.ExitCode, c.want)
		}
		if s.Verdict == Pass && s.Gate.ExitCode != ExitPassed {
			t.Errorf("%s: PASS with gate exit %d", c.name, s.Gate.ExitCode)
		}
	}
}

// What a summary says of the runs that went at once, for each kind of plan.
func TestParallelString(t *testing.T) {
	for _, c := range []struct {
		p    Parallel
		want string
	}{
		{Parallel{Runs: 1, TimedCores: 1}, "1 run at a time"},
		{Parallel{Runs: 2, TimedCores: 1}, "2 runs at once, timed runs one at a time"},
		{Parallel{Runs: 2, TimedCores: 2}, "2 runs at once, timed runs within 2 cores"},
		{Parallel{Runs: 2, TimedCores: 2, InProcessCores: 3}, "2 runs at once, timed runs within 2 cores (3 on in-process stores)"},
		{Parallel{Runs: 2, TimedCores: 1, InProcessCores: 1.5}, "2 runs at once, timed runs within 1 core (1.5 on in-process stores)"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
