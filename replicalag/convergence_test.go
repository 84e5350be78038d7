package replicalag

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/backends/replica"
	"github.com/storecheck/storecheck/model"
)

// positioned is a cluster of reference stores whose replicas report what
// the test says.
type positioned struct {
	primary  *model.Reference
	at       int64
	replicas map[string]*model.Reference
	pos      map[string]int64
}

func (p *positioned) NewReplica(context.Context, string, uint64) (*replica.Store, error) {
	return nil, nil
}
func (p *positioned) Primary() model.Store                           { return p.primary }
func (p *positioned) Close() error                                   { return nil }
func (p *positioned) PrimaryPosition(context.Context) (int64, error) { return p.at, nil }
func (p *positioned) Position(name string) (int64, bool) {
	v, ok := p.pos[name]
	return v, ok
}
func (p *positioned) LocalDump(ctx context.Context, name string) (*model.Dump, error) {
	return p.replicas[name].Dump(ctx)
}

func commitTo(t *testing.T, s model.Store, id string, versions int) {
	t.Helper()
	exe := &model.Execution{ID: id, DefinitionID: "d", Status: "running"}
	for range versions {
		if err := s.Commit(context.Background(), exe, model.Batch{Emits: []model.Emit{{Event: model.Event{Name: "x", ID: id}}}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConverge(t *testing.T) {
	build := func() *positioned {
		p := &positioned{primary: model.NewReference(model.DefaultConfig()), at: 7,
			replicas: map[string]*model.Reference{"r0": model.NewReference(model.DefaultConfig()), "r1": model.NewReference(model.DefaultConfig())},
			pos:      map[string]int64{"r0": 7, "r1": 7}}
		for _, s := range []model.Store{p.primary, p.replicas["r0"], p.replicas["r1"]} {
			commitTo(t, s, "e", 2)
		}
		return p
	}
	ctx := context.Background()
	if v, n := converge(ctx, build(), []string{"r0", "r1"}); len(v) > 0 || len(n) > 0 {
		t.Fatalf("converged replicas: violations %v, notes %v", v, n)
	}
	behind := build()
	behind.pos["r1"] = 6
	if v, _ := converge(ctx, behind, []string{"r0", "r1"}); len(v) != 1 || !strings.Contains(v[0], "r1 is at replication position 6") {
		t.Errorf("a replica behind: %v", v)
	}
	differs := build()
	commitTo(t, differs.replicas["r0"], "f", 1) // a row the primary does not hold
	if v, _ := converge(ctx, differs, []string{"r0", "r1"}); len(v) != 1 || !strings.Contains(v[0], "r0 differs from the primary") {
		t.Errorf("a replica with a row the primary lacks: %v", v)
	}
	silent := build()
	delete(silent.pos, "r0")
	if v, _ := converge(ctx, silent, []string{"r0", "r1"}); len(v) != 1 || !strings.Contains(v[0], "no replication position") {
		t.Errorf("a replica without a position: %v", v)
	}
}

// TestReopenedReplicaChecks: a reopened replica's file must pass its
// integrity check and must not be behind what its dead process reported,
// unless the primary restarted meanwhile.
func TestReopenedReplicaChecks(t *testing.T) {
	cases := []struct {
		r    replica.Reopened
		want string
	}{
		{replica.Reopened{Replica: "rx", Integrity: "ok", Killed: 9, Resumed: 9, Comparable: true}, ""},
		{replica.Reopened{Replica: "rx", Integrity: "*** in database main ***\nPage 3: btreeInitPage() returns error code 11", Killed: 9, Resumed: 9, Comparable: true}, "replica integrity"},
		{replica.Reopened{Replica: "rx", Integrity: "ok", Killed: 9, Resumed: 4, Comparable: true}, "replica monotonic"},
		{replica.Reopened{Replica: "rx", Integrity: "ok", Killed: 9, Resumed: 4, Comparable: false}, ""},
	}
	for _, c := range cases {
		back := &reopened{}
		back.add(&c.r)
		switch {
		case c.want == "" && len(back.broken) > 0:
			t.Errorf("%+v: flagged %v", c.r, back.broken)
		case c.want != "" && (len(back.broken) != 1 || !strings.HasPrefix(back.broken[0], c.want)):
			t.Errorf("%+v: want %s, got %v", c.r, c.want, back.broken)
		}
	}
}

// TestEachCheckShowsItsViolations: the history checker's violations, as
// many as shown, do not hide the convergence check's (the heal's loads and
// the convergence check both name replica convergence).
func TestEachCheckShowsItsViolations(t *testing.T) {
	r := &LevelResult{}
	for i := range maxShownViolations {
		r.Violations = append(r.Violations, fmt.Sprintf("replica convergence: after the heal, replica r%d shows e0 stale", i))
	}
	many := []string{"replica convergence: replica r0 is at replication position 6", "b", "c", "d", "e", "f"}
	r.addViolations(guaranteeConvergence, many)
	if !slices.Contains(r.Violations, many[0]) || len(r.Violations) != 2*maxShownViolations {
		t.Errorf("violations shown: %q", r.Violations)
	}
}
