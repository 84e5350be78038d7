package procfault

import (
	"context"
	"errors"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// TestLossRules: what a recovery after a power cut may lack, per setting.
// Three commits of e0 were acknowledged; the recovered tables hold all,
// the first two (a suffix lost), or the first and the third (a hole).
func TestLossRules(t *testing.T) {
	c1, c2, c3 := commitOf("k0-1", 0, 11), commitOf("k0-2", 1, 12), commitOf("k0-3", 2, 13)
	all := tablesAfter(t, apply(t, c1, whole), apply(t, c2, whole), apply(t, c3, whole))
	prefix := tablesAfter(t, apply(t, c1, whole), apply(t, c2, whole))
	c3From1 := commitOf("k0-3", 1, 13) // the third commit as if the second never was
	hole := tablesAfter(t, apply(t, c1, whole), apply(t, c3From1, whole))
	cases := []struct {
		name      string
		rule      lossRule
		integrity string
		got       *model.Dump
		lost      int
		want      error
		unexplain bool
	}{
		{"full keeps all", keepAll, "ok", all, 0, nil, false},
		{"full loses a suffix", keepAll, "ok", prefix, 0, ErrDurability, false},
		{"normal keeps all", keepPrefix, "ok", all, 0, nil, false},
		{"normal loses a suffix", keepPrefix, "ok", prefix, 1, nil, false},
		{"normal loses a middle commit", keepPrefix, "ok", hole, 0, ErrDurability, false},
		{"normal damaged", keepPrefix, "database disk image is malformed", all, 0, ErrIntegrity, false},
		{"off loses a middle commit", keepNothing, "ok", hole, 3, nil, true},
		{"off damaged", keepNothing, "database disk image is malformed", all, 3, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger()
			for i, cm := range []*wireCommit{c1, c2, c3} {
				l.observe(message{Type: msgBegin, N: i + 1, Commit: cm})
				l.observe(message{Type: msgAck, N: i + 1})
			}
			found, err := l.verifyCut(context.Background(), c.rule, c.integrity, roundTrip(t, c.got))
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			if err != nil {
				return
			}
			if found.Lost != c.lost || (found.Unexplained != "") != c.unexplain {
				t.Errorf("lost %d, unexplained %q; want %d lost, unexplained %v", found.Lost, found.Unexplained, c.lost, c.unexplain)
			}
			if want := 3 - found.Lost; !found.Applied && len(l.acked) != want && !c.unexplain {
				t.Errorf("the ledger still asks for %d commits, want %d", len(l.acked), want)
			}
			if l.total != 3 {
				t.Errorf("total acknowledged %d, want 3", l.total)
			}
		})
	}
}
