package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"p"}`,
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.5}`,
		`{"Action":"run","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: NOT RUN: no sqld here\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"run","Package":"p","Test":"TestE"}`,
		`{"Action":"output","Package":"p","Test":"TestE","Output":"    e_test.go:7: NOT RUN: FAIL explained by known issue x\n"}`,
		`{"Action":"output","Package":"p","Test":"TestE","Output":"    e_test.go:44: evidence kept in /tmp/e\n"}`,
		`{"Action":"output","Package":"p","Test":"TestE","Output":"--- SKIP: TestE (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestE"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestC","Elapsed":0.1}`,
		`{"Action":"run","Package":"p","Test":"TestD"}`,
		`{"Action":"output","Package":"p","Test":"TestD","Output":"panic: test timed out after 30m0s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":1}`,
		`{"Action":"start","Package":"q"}`,
	}, "\n")
	var out strings.Builder
	code := run(strings.NewReader(in), &out)
	got := out.String()
	for _, want := range []string{
		"--- PASS: TestA", "--- SKIP: TestB: NOT RUN: no sqld here", "--- FAIL: TestC", "want 1, got 2",
		"FAIL q: the test binary ended without a verdict",
		"--- NO VERDICT: TestD", "panic: test timed out after 30m0s",
		"1 tests passed, 4 failed, 2 NOT RUN (skipped)", "NOT RUN p TestB: NOT RUN: no sqld here",
		"NOT RUN p TestE: NOT RUN: FAIL explained by known issue x",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}
