package knownissues

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/linearizability"
	"github.com/storecheck/storecheck/model"
)

// TestAppliedTwiceByTheRealChecks couples rqlite-forwarded-write-resent's
// Explains to the checks whose lines it reads: a history in which a commit
// was applied twice (its first copy won the CAS, the second, whose answer
// the client heard, lost it) is checked by linearizability.Check and its
// violations written by the evidence package, as a run writes them; the
// issue must explain that FAIL and no FAIL with another bug beside it. If a
// checker's message changes, the patterns no longer match and the
// first case fails here, not only on a real rqlite run.
func TestAppliedTwiceByTheRealChecks(t *testing.T) {
	is := Lookup("rqlite-forwarded-write-resent")
	if is == nil {
		t.Fatal("no rqlite-forwarded-write-resent in the catalogue")
	}
	for _, c := range []struct {
		name string
		// other is the bug beside the writes applied twice, on e0.
		other misbehaviour
		want  bool
	}{
		{"writes applied twice", 0, true},
		{"and a lost update of another execution", loseWrite, false},
		{"and a stale trace read of another execution", staleTrace, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			v := checkAppliedTwice(t, c.other)
			if _, err := evidence.At(dir).WriteVerdict(v); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, is.EvidenceSuffix), []byte(cluster.ResentSignature+"2: each may be applied twice\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, g := range v.Broken {
				if !c.want && !slices.Contains(is.Guarantees, g) {
					continue // a guarantee the issue never explains: not its Explains' doing
				}
				got := Match("rqlite+process", "leader-pause", g, dir)
				if (got != nil && got.ID == is.ID) != c.want {
					t.Errorf("%s: explained by %s: %v, want %v; the violations:\n%s", g, is.ID, !c.want, c.want, strings.Join(v.Violations, "\n"))
				}
			}
		})
	}
}

// misbehaviour is a bug of the test store on execution e0, beside the
// writes it applies twice on e1 and e2.
type misbehaviour int

const (
	// loseWrite acknowledges e0's second commit without applying it.
	loseWrite misbehaviour = iota + 1
	// staleTrace answers the first read of e0's trace after its second
	// commit with the ring before it: a line of the trace-ring check, the
	// shape the issue explains, but of an execution no write was applied
	// twice on.
	staleTrace
)

// checkAppliedTwice records a run on a store that applies the second
// commit of e1 and of e2 twice (as a follower re-sending a forwarded write
// makes it), with other on e0, heals it and returns the checker's verdict
// as a run writes it. It asserts the verdict is a FAIL for atomicity, so
// that a store that stopped misbehaving cannot pass the test vacuously.
func checkAppliedTwice(t *testing.T, other misbehaviour) evidence.Verdict {
	t.Helper()
	ctx := context.Background()
	st := &resendStore{Reference: model.NewReference(model.DefaultConfig()), twice: map[string]bool{"e1": true, "e2": true}, other: other}
	rec := linearizability.NewRecorder(st)
	c := rec.Client()
	for _, exec := range []string{"e0", "e1", "e2"} {
		prev := ""
		for v := range int64(3) {
			tok := exec + "-t" + string(rune('1'+v))
			exe := &model.Execution{ID: exec, DefinitionID: "d", Version: v, Status: "running",
				Extra: map[string]json.RawMessage{linearizability.TokenField: quoted(tok), linearizability.PrevField: quoted(prev)}}
			b := model.Batch{ProcessedEventID: model.Ptr(tok + "/p"), Trace: json.RawMessage(`{"token":"` + tok + `/trace"}`)}
			if err := c.Commit(ctx, exe, b); err != nil && !errors.As(err, new(*model.StoreConflict)) {
				t.Fatal(err)
			}
			if _, err := c.Load(ctx, exec); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ReadTrace(ctx, exec); err != nil {
				t.Fatal(err)
			}
			prev = tok
		}
	}
	if err := linearizability.Heal(ctx, rec.HealClient(), rec.History()); err != nil {
		t.Fatal(err)
	}
	rep, err := linearizability.Check(ctx, rec.History(), linearizability.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := evidence.VerdictOf(rep)
	if !slices.Contains(v.Broken, "atomicity") {
		t.Fatalf("a write applied twice is not an atomicity FAIL: %s", v.Text())
	}
	return v
}

func quoted(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// resendStore is the reference store with rqlite-forwarded-write-resent's
// bug: the second commit of an execution in twice is applied, then sent
// again, and the client hears the second copy's conflict. other adds a
// bug of its own on e0.
type resendStore struct {
	*model.Reference
	twice   map[string]bool
	other   misbehaviour
	commits map[string]int
	// before is e0's trace ring as it was before its second commit
	// (staleTrace), until it is read.
	before []model.TraceEntry
}

func (s *resendStore) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	if s.commits == nil {
		s.commits = map[string]int{}
	}
	s.commits[exe.ID]++
	second := s.commits[exe.ID] == 2
	switch {
	case second && s.twice[exe.ID]:
		if err := s.Reference.Commit(ctx, exe.Clone(), b); err != nil {
			return err
		}
	case second && exe.ID == "e0" && s.other == loseWrite:
		exe.Version++
		return nil
	case second && exe.ID == "e0" && s.other == staleTrace:
		old, err := s.Reference.ReadTrace(ctx, exe.ID)
		if err != nil {
			return err
		}
		s.before = old
	}
	return s.Reference.Commit(ctx, exe, b)
}

func (s *resendStore) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	if id == "e0" && s.before != nil {
		old := s.before
		s.before = nil
		return old, nil
	}
	return s.Reference.ReadTrace(ctx, id)
}
