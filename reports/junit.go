package reports

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// JUnit XML, as CI systems read it: one suite per backend, one test case per
// backend × scenario.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	ms         int64
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// renderJUnit writes junit.xml.
func renderJUnit(rep *report) ([]byte, error) {
	all := junitSuites{Name: "storecheck"}
	index := map[string]int{}
	var totalMS int64
	for _, v := range rep.Runs {
		i, ok := index[v.Backend]
		if !ok {
			i = len(all.Suites)
			index[v.Backend] = i
			all.Suites = append(all.Suites, junitSuite{
				Name: v.Backend, Timestamp: rep.Date.Format("2006-01-02T15:04:05"),
				Properties: []junitProperty{{"seed", strconv.FormatUint(rep.Seed, 10)}, {"command", rep.Command}},
			})
		}
		s := &all.Suites[i]
		c := junitCase{ClassName: v.Backend, Name: v.Scenario, Time: seconds(v.DurationMS)}
		// A run expected to FAIL (a mutant's) passes when it FAILs, the
		// mutant caught, and fails when the mutant survived every run.
		switch {
		case v.Outcome == Caught:
			c.SystemOut = v.caughtLine() + "\n" + failDetail(v)
		case v.Outcome == Survived:
			c.Failure = &junitMessage{Message: survivedLine, Type: string(Survived), Body: passDetail(v)}
			s.Failures++
		case v.Outcome == NotCaughtHere:
			c.SystemOut = notCaughtHereLine + "\n" + passDetail(v)
		case v.Verdict == Pass:
			c.SystemOut = passDetail(v)
		case v.Verdict == Fail:
			msg := oneLine(v.Reason)
			if v.KnownIssue != "" {
				// Named in every report (docs/KNOWN-ISSUES.md): the CI
				// view too, where a gate run with --accept-known passes
				// beside this failure.
				msg = "known issue " + v.KnownIssue + ": " + msg
			}
			c.Failure = &junitMessage{Message: msg, Type: v.Guarantee, Body: failDetail(v)}
			s.Failures++
		case v.Verdict == Interrupted:
			// An interrupted run is no result: an error, not a skip a CI
			// view would show as fine.
			c.Error = &junitMessage{Message: fmt.Sprintf("%s: %s", v.Verdict, oneLine(v.Reason)), Type: string(Interrupted)}
			s.Errors++
		default:
			c.Skipped = &junitMessage{Message: fmt.Sprintf("%s: %s", v.Verdict, oneLine(v.Reason))}
			s.Skipped++
		}
		s.Tests++
		s.ms += v.DurationMS
		totalMS += v.DurationMS
		s.Cases = append(s.Cases, c)
	}
	if c, ok := gateCase(rep, all.Suites); ok {
		all.Suites = append(all.Suites, junitSuite{Name: gateSuite, Tests: 1, Failures: 1,
			Timestamp:  rep.Date.Format("2006-01-02T15:04:05"),
			Properties: []junitProperty{{"seed", strconv.FormatUint(rep.Seed, 10)}, {"command", rep.Command}},
			Cases:      []junitCase{c}})
	}
	for i := range all.Suites {
		s := &all.Suites[i]
		s.Time = seconds(s.ms)
		all.Tests, all.Failures, all.Errors, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Errors+s.Errors, all.Skipped+s.Skipped
	}
	all.Time = seconds(totalMS)
	out, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode junit: %w", err)
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// gateSuite names the suite of the gate's own test case (gateCase).
const gateSuite = "storecheck gate"

// gateCase is a failing test case for a gate whose exit code is not 0 when
// no run's case says so: a NOT RUN under --fail-on-not-run, or every run
// NOT RUN, is a skipped case, and a CI system reading only skips would
// show the job's tests as passing while the job failed.
func gateCase(rep *report, suites []junitSuite) (junitCase, bool) {
	if rep.GateFailed == "" {
		return junitCase{}, false
	}
	for _, s := range suites {
		if s.Failures > 0 || s.Errors > 0 {
			return junitCase{}, false
		}
	}
	return junitCase{ClassName: gateSuite, Name: "exit code", Time: seconds(0),
		Failure: &junitMessage{Message: oneLine(rep.GateFailed), Type: "gate",
			Body: rep.GateFailed + "\n" + "command: " + rep.Command + "\n"}}, true
}

// failDetail is the body of a failure: what broke and how to repeat it.
func failDetail(v *runView) string {
	var b strings.Builder
	if v.Guarantee != "" {
		fmt.Fprintf(&b, "broken guarantee: %s\n", v.Guarantee)
	}
	if v.KnownIssue != "" {
		fmt.Fprintf(&b, "known upstream issue: %s (docs/KNOWN-ISSUES.md): the run's evidence shows it\n", v.KnownIssue)
	}
	fmt.Fprintf(&b, "reason: %s\n", v.Reason)
	if len(v.MinimalSteps) > 0 {
		fmt.Fprintf(&b, "minimal failing sequence (%d steps):\n", len(v.MinimalSteps))
		for _, s := range v.MinimalSteps {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	fmt.Fprintf(&b, "seed: %d\n", v.Seed)
	if v.Reproduce != "" {
		fmt.Fprintf(&b, "reproduce: %s\n", v.Reproduce)
	}
	if v.Dir != "" {
		fmt.Fprintf(&b, "artifacts: %s\n", v.Dir)
	}
	return b.String()
}

// passDetail is the system-out of a passed run: its figures.
func passDetail(v *runView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ops: %d\n", v.Ops)
	if x, ok := v.throughput(); ok {
		fmt.Fprintf(&b, "throughput: %.0f ops/s\n", x)
	}
	if p, ok := v.latency("commit"); ok {
		fmt.Fprintf(&b, "commit latency: p50 %.3f ms, p95 %.3f ms, p99 %.3f ms\n", p.P50, p.P95, p.P99)
	}
	if v.Reason != "" {
		fmt.Fprintf(&b, "note: %s\n", v.Reason)
	}
	fmt.Fprintf(&b, "reproduce: %s\n", v.Reproduce)
	return b.String()
}

// seconds formats milliseconds as JUnit's seconds.
func seconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}

// oneLine joins the lines of s, for an attribute.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
