package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
)

// tablesAt is a node's tables holding execution e0 at version v.
func tablesAt(id string, v int64) nodeTables {
	return nodeTables{ID: id, Dump: &model.Dump{Executions: []model.ExecutionRow{{ID: "e0", DefinitionID: "d", Version: v}}}}
}

// TestJudgeNodesNamesWhoHoldsTheWrites: a node short of an acknowledged
// version breaks durability, and the reason says which nodes are not short
// (the shape of a single diverged node, seen on a leader-stall run); nodes
// that hold every version but differ break convergence; equal nodes pass.
func TestJudgeNodesNamesWhoHoldsTheWrites(t *testing.T) {
	acked := map[string]int64{"e0": 313}
	g, err := judgeNodes([]nodeTables{tablesAt("n1", 276), tablesAt("n2", 313), tablesAt("n3", 313)}, acked, 5705)
	if g != GuaranteeDurability || err == nil {
		t.Fatalf("n1 short of v313: got %q, %v; want durability", g, err)
	}
	for _, want := range []string{"node n1 at applied index 5705", "version 276", "version 313", "n2, n3 hold every acknowledged version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("reason %q lacks %q", err, want)
		}
	}
	if _, err := judgeNodes([]nodeTables{tablesAt("n1", 276), tablesAt("n2", 276)}, acked, 9); err == nil || !strings.Contains(err.Error(), "no node holds") {
		t.Errorf("every node short: %v", err)
	}
	g, err = judgeNodes([]nodeTables{tablesAt("n1", 313), tablesAt("n2", 314)}, acked, 9)
	if g != GuaranteeConvergence || err == nil || !strings.Contains(err.Error(), "node n2 differs from node n1") {
		t.Errorf("nodes at 313 and 314: got %q, %v; want convergence", g, err)
	}
	if g, err := judgeNodes([]nodeTables{tablesAt("n1", 313), tablesAt("n2", 313)}, acked, 9); g != "" || err != nil {
		t.Errorf("equal nodes: got %q, %v", g, err)
	}
}

// TestKeepNodesOnlyWhenTheyDiverged: each node's tables are kept as
// nodes/ID.json when the nodes diverged, and nothing otherwise.
func TestKeepNodesOnlyWhenTheyDiverged(t *testing.T) {
	ctx := context.Background()
	nodes := []nodeTables{tablesAt("n1", 276), tablesAt("n2", 313)}
	g, err := judgeNodes(nodes, map[string]int64{"e0": 313}, 7)

	quiet := t.TempDir()
	keepNodes(ctx, Params{OutDir: quiet}, nil, afterHeal{nodes: nodes}, nil)
	if _, serr := os.Stat(filepath.Join(quiet, nodesEvidence)); !os.IsNotExist(serr) {
		t.Errorf("nodes that agree left %s (stat: %v)", nodesEvidence, serr)
	}

	dir := t.TempDir()
	reads, n1reads := 0, 0
	reread := func(_ context.Context, id string) (*model.Dump, error) {
		reads++
		if id != "n1" {
			return tablesAt(id, 313).Dump, nil
		}
		n1reads++
		if n1reads%2 == 1 {
			return tablesAt(id, 313).Dump, nil // the writes, on some reads only
		}
		return tablesAt(id, 276).Dump, nil
	}
	keepNodes(ctx, Params{OutDir: dir}, nil, afterHeal{nodes: nodes, err: err, guarantee: g, acked: map[string]int64{"e0": 313}}, reread)
	if reads != 2*rereads {
		t.Errorf("%d re-reads, want %d", reads, 2*rereads)
	}
	txt, rerr := os.ReadFile(filepath.Join(dir, nodesEvidence, "rereads.txt"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, want := range []string{"acknowledged: e0 v313", "read 1, node n1: e0 v313", "read 2, node n1: e0 v276", "read 1, node n2: e0 v313"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("rereads.txt lacks %q:\n%s", want, txt)
		}
	}
	for _, n := range nodes {
		raw, rerr := os.ReadFile(filepath.Join(dir, nodesEvidence, n.ID+".json"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		var back nodeTables
		if jerr := json.Unmarshal(raw, &back); jerr != nil {
			t.Fatal(jerr)
		}
		if back.ID != n.ID || len(back.Dump.Executions) != 1 || back.Dump.Executions[0].Version != n.Dump.Executions[0].Version {
			t.Errorf("%s.json holds %+v, want %+v", n.ID, back, n)
		}
	}
}
