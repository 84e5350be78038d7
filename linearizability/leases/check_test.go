package leases

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sec = int64(1e9)

// h builds a history from ops in order: each op gets call 2i and return
// 2i+1, so they are sequential unless a test overlaps them.
func h(ops ...Op) []Op {
	for i := range ops {
		ops[i].Call, ops[i].Return = int64(2*i), int64(2*i+1)
	}
	return ops
}

func claim(worker, run string, token, version, now int64) Op {
	return Op{Kind: Claim, Worker: worker, Run: run, Token: token, Version: version, Lease: 10 * sec, Now: now, Expires: now + 10*sec, Outcome: OK}
}

func commit(worker, run string, token, expected, seq, now int64, out Outcome) Op {
	op := Op{Kind: Commit, Worker: worker, Run: run, Token: token, Expected: expected, Seq: seq, Now: now, Outcome: out}
	if out == OK {
		op.Version = expected + 1
	}
	return op
}

func requeue(now int64, ids ...string) Op {
	return Op{Kind: Requeue, Now: now, Requeued: ids, Outcome: OK}
}

func guarantees(r *Report) []string {
	var out []string
	for _, v := range r.Violations {
		if !slices.Contains(out, v.Guarantee) {
			out = append(out, v.Guarantee)
		}
	}
	return out
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name    string
		ops     []Op
		verdict Verdict
		want    []string
	}{
		{"takeover with the stale token rejected", h(
			claim("w1", "r", 1, 2, 0),
			commit("w1", "r", 1, 2, 1, 1*sec, OK),
			requeue(11*sec, "r"),
			claim("w2", "r", 2, 5, 12*sec),
			commit("w1", "r", 1, 5, 2, 13*sec, Stale),
			Op{Kind: Finish, Worker: "w2", Run: "r", Token: 2, Expected: 5, Target: "completed", Now: 13 * sec, Outcome: OK, Version: 6},
		), Ok, nil},
		{"a claim that keeps the token", h(
			claim("w1", "r", 1, 2, 0),
			requeue(11*sec, "r"),
			claim("w2", "r", 1, 4, 12*sec),
		), Illegal, []string{GuaranteeTokens, GuaranteeRegister}},
		{"a stale token accepted after a takeover", h(
			claim("w1", "r", 1, 2, 0),
			requeue(11*sec, "r"),
			claim("w1", "r", 2, 4, 12*sec),
			Op{Kind: Finish, Worker: "w1", Run: "r", Token: 1, Expected: 4, Target: "completed", Now: 13 * sec, Outcome: OK, Version: 5, PastLease: true},
		), Illegal, []string{GuaranteeStaleToken, GuaranteePastLease, GuaranteeRegister}},
		{"an expired lease renewed", h(
			claim("w1", "r", 1, 2, 0),
			Op{Kind: Renew, Worker: "w1", Run: "r", Token: 1, Lease: 10 * sec, Now: 10 * sec, Expires: 20 * sec, Outcome: OK},
		), Illegal, []string{GuaranteeRegister}},
		{"a requeue of a live lease", h(
			claim("w1", "r", 1, 2, 0),
			requeue(5*sec, "r"),
		), Illegal, []string{GuaranteeRegister}},
		{"a claim with an unknown outcome", h(
			claim("w1", "r", 1, 2, 0),
			Op{Kind: Claim, Worker: "w2", Now: sec, Lease: sec, Outcome: Indeterminate},
		), Unknown, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check(context.Background(), c.ops, Options{})
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %v %v", r.Verdict, c.verdict, r.Violations, r.Notes)
			}
			if got := guarantees(r); !slices.Equal(got, c.want) {
				t.Errorf("guarantees %v, want %v: %v", got, c.want, r.Violations)
			}
		})
	}
}

// Concurrent operations may linearize in either order: a renew that
// overlaps the sweep that took its lease may have come first.
func TestCheckOverlap(t *testing.T) {
	ops := []Op{
		{Kind: Claim, Worker: "w1", Run: "r", Token: 1, Version: 2, Lease: 10 * sec, Now: 0, Expires: 10 * sec, Outcome: OK, Call: 0, Return: 1},
		{Kind: Requeue, Now: 12 * sec, Requeued: []string{"r"}, Outcome: OK, Call: 2, Return: 5},
		{Kind: Renew, Worker: "w1", Run: "r", Token: 1, Lease: 10 * sec, Now: 9 * sec, Expires: 19 * sec, Outcome: OK, Call: 3, Return: 4},
	}
	if r := Check(context.Background(), ops, Options{}); r.Verdict != Illegal {
		// The renew extended the lease to 19 s: the sweep at 12 s could not
		// have requeued it after the renew, nor before (the renew then
		// fails). Illegal either way.
		t.Fatalf("verdict %s, want Illegal", r.Verdict)
	}
	ops[1].Now = 20 * sec
	if r := Check(context.Background(), ops, Options{}); r.Verdict != Ok {
		t.Fatalf("renew then sweep at 20 s: verdict %s, want Ok: %v", r.Verdict, r.Violations)
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	ops := h(claim("w1", "r", 1, 2, 0), requeue(11*sec, "r"))
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, ops); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSONL(&buf)
	if err != nil || len(back) != 2 || back[1].Requeued[0] != "r" || back[0].Expires != ops[0].Expires {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}

// TestReadJSONLRefusesOtherHistories: a line of an execution-store history,
// a field or kind a lease operation does not have, is an error naming the
// line, never an operation of a lease history.
func TestReadJSONLRefusesOtherHistories(t *testing.T) {
	good := `{"client":0,"kind":"requeue_expired_leases","now":1,"outcome":"ok","call":1,"return":2}`
	for text, want := range map[string]string{
		`{"client":0,"kind":"commit","key":"k","call":1,"return":2}`:                                   `line 1: not a lease history: json: unknown field "key"`,
		`{"client":0,"kind":"commit","call":1,"return":2}`:                                             `line 1: not a lease history: unknown kind "commit"`,
		good + "\n" + `{"client":0,"kind":"claim_next","now":1,"outcome":"maybe","call":3,"return":4}`: `line 2: unknown outcome "maybe"`,
	} {
		if _, err := ReadJSONL(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", text, err, want)
		}
	}
	if _, err := ReadJSONL(strings.NewReader(`{"client":0,"kind":"commit"}`)); !errors.Is(err, ErrNotLeaseHistory) {
		t.Errorf("a first line of another history: %v, want ErrNotLeaseHistory", err)
	}
	if _, err := ReadJSONL(strings.NewReader(good + "\n{}")); err == nil || errors.Is(err, ErrNotLeaseHistory) {
		t.Errorf("a bad second line: %v, want an error other than ErrNotLeaseHistory", err)
	}
	if ops, err := ReadJSONL(strings.NewReader(good + "\n\n" + good + "\n")); err != nil || len(ops) != 2 {
		t.Errorf("two operations and a blank line: %d, %v", len(ops), err)
	}
}

// TestCutLeaseHistoryIsRefused: a lease history cut at a line ending holds
// only well-formed lines, and its check would pass the operations it kept;
// its header says how many were written, so a file holding fewer (or
// more) is refused. A history without a header (written before it was
// recorded, or by hand) is read as it is.
func TestCutLeaseHistoryIsRefused(t *testing.T) {
	ops := h(claim("w1", "r", 1, 2, 0), requeue(11*sec, "r"), claim("w2", "r", 12*sec, 2, 0), requeue(30*sec, "r"))
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, ops); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	if !strings.HasPrefix(lines[0], `{"lease_history":{"ops":4}}`) {
		t.Fatalf("the first line states no count: %s", lines[0])
	}
	for _, cut := range []string{strings.Join(lines[:3], ""), lines[0], buf.String() + lines[1]} {
		if _, err := ReadJSONL(strings.NewReader(cut)); !errors.Is(err, ErrCut) || errors.Is(err, ErrNotLeaseHistory) {
			t.Errorf("ReadJSONL of\n%s: %v; want ErrCut", cut, err)
		}
	}
	path := filepath.Join(t.TempDir(), "history-goroutines.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); !errors.Is(err, ErrCut) || !strings.Contains(err.Error(), "2 operations, but its header says 4 were written") {
		t.Errorf("LoadFile of a cut lease history: %v; want ErrCut with the counts", err)
	}
	old := strings.Join(lines[1:3], "")
	if back, err := ReadJSONL(strings.NewReader(old)); err != nil || len(back) != 2 {
		t.Errorf("a history without a header: %d operations, %v; want 2 read as they are", len(back), err)
	}
	for _, bad := range []string{`{"lease_history":{"ops":4,"x":1}}`, `{"lease_history":{}} {}`, `{"lease_history":null}`} {
		if _, err := ReadJSONL(strings.NewReader(bad + "\n" + old)); err == nil || !strings.Contains(err.Error(), "line 1: header") {
			t.Errorf("header %s: %v; want an error naming the header", bad, err)
		}
	}
}
