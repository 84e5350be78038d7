package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/storecheck/storecheck/reports"
)

// TestShardAndMerge is #19's acceptance: qualify --shard 1/2 and 2/2, then
// merge, give the verdict table of the unsharded run of the same seed, run
// folders included; the shard and merged summaries match the schema; and
// merge refuses what is not the N shards of one plan.
func TestShardAndMerge(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	qualify := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"qualify", "--backends", "memory:,sqlite:" + db, "--scenarios", "conformance,concurrent,crash-recovery",
			"--checks", "20", "--ops", "300", "--seed", "5", "--out", out, "--quiet"}, extra...)
		if code, stdout, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	whole, s1, s2, s3, merged := filepath.Join(dir, "whole"), filepath.Join(dir, "s1"), filepath.Join(dir, "s2"), filepath.Join(dir, "s3"), filepath.Join(dir, "merged")
	qualify(whole)
	qualify(s1, "--shard", "1/2")
	qualify(s2, "--shard", "2/2")
	if code, stdout, stderr := run(t, "merge", "--out", merged, s2, filepath.Join(s1, "summary.json")); code != ExitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	table := func(out string) string {
		sum, err := reports.ReadSummary(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range sum.Runs {
			fmt.Fprintf(&b, "%s %s %s %d %s\n", r.Backend, r.Scenario, r.Verdict, r.Seed, r.Dir)
			if r.Dir != "" {
				if _, err := os.Stat(filepath.Join(out, r.Dir)); err != nil {
					t.Errorf("%s: run folder: %v", out, err)
				}
			}
		}
		return b.String()
	}
	// --parallel 2, with progress shown (plain: stderr is no terminal), gives
	// the same table as one run at a time.
	par := filepath.Join(dir, "par")
	args := []string{"qualify", "--backends", "memory:,sqlite:" + db, "--scenarios", "conformance,concurrent,crash-recovery",
		"--checks", "20", "--ops", "300", "--seed", "5", "--out", par, "--parallel", "2"}
	if code, stdout, stderr := run(t, args...); code != ExitOK || !strings.Contains(stderr, "started") {
		t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	if w, p := table(whole), table(par); w != p {
		t.Errorf("--parallel 2 table differs:\nwhole:\n%s\nparallel:\n%s", w, p)
	}
	if w, m := table(whole), table(merged); w != m || w == "" {
		t.Errorf("merged table differs from the unsharded one:\nwhole:\n%s\nmerged:\n%s", w, m)
	}
	if !strings.Contains(table(s1), "conformance") || strings.Count(table(s1), "\n")+strings.Count(table(s2), "\n") != 6 {
		t.Errorf("the shards do not split the 6 runs:\n%s\n%s", table(s1), table(s2))
	}
	schema, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "summary.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{s1, merged} {
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("%s: %v", out, err)
		}
	}
	if code, stdout, _ := run(t, "diff", "--slowdown", "-1", "--rate-rise", "-1", whole, merged); code != ExitOK || !strings.Contains(stdout, "no regression") {
		t.Errorf("diff of the unsharded run and the merged shards: exit %d\n%s", code, stdout)
	}
	qualify(s3, "--shard", "1/3")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", s1}, "shards missing: 2/2"},
		{[]string{"merge", s1, s1}, "shard 1/2 given twice"},
		{[]string{"merge", s1, s3}, "not one plan"},
		{[]string{"merge", whole}, "not a shard's summary"},
		{[]string{"merge"}, "usage: storecheck merge"},
		{[]string{"qualify", "--shard", "3/2"}, "want K/N with 1 <= K <= N"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// merge refuses, in one line and with nothing written, shards that are not
// of one plan though their seed, shard count and plan size agree: another
// backend, other options. A shard without a plan digest (made before one
// was recorded) is refused too.
func TestMergeRefusesShardsOfOtherPlans(t *testing.T) {
	dir := t.TempDir()
	shard := func(name, k string, extra ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		args := append([]string{"run", "--backend", "memory:", "--seed", "4", "--checks", "5", "--ops", "50", "--quiet", "--shard", k + "/2", "--out", out}, extra...)
		if code, stdout, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return out
	}
	y1, y2 := shard("y1", "1"), shard("y2", "2")
	backend := filepath.Join(dir, "backend")
	args := []string{"run", "--backend", "runs+memory:", "--seed", "4", "--checks", "5", "--ops", "50", "--quiet", "--shard", "2/2", "--out", backend}
	if code, stdout, stderr := run(t, args...); code != ExitOK {
		t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	checks, clients := shard("checks", "2", "--checks", "6"), shard("clients", "2", "--clients", "3")
	old := filepath.Join(dir, "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	withoutDigest(t, filepath.Join(y2, "summary.json"), filepath.Join(old, "summary.json"))
	for _, c := range []struct {
		name, other, want string
	}{
		{"another backend", backend, "are shards of different plans"},
		{"other --checks", checks, "are shards of different plans"},
		{"other --clients", clients, "are shards of different plans"},
		{"no plan digest", old, "records no plan digest"},
	} {
		out := filepath.Join(dir, "merged-"+strings.ReplaceAll(c.name, " ", "-"))
		code, _, stderr := run(t, "merge", "--out", out, y1, c.other)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and one line saying %q", c.name, code, stderr, ExitUsage, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: merge made its output folder (%v)", c.name, err)
		}
	}
	if code, stdout, stderr := run(t, "merge", "--out", filepath.Join(dir, "merged"), "--quiet", y1, y2); code != ExitOK {
		t.Errorf("the shards of one plan: exit %d\n%s%s", code, stdout, stderr)
	}
	// Shards on one machine, each with its database in its own output
	// folder (ci/README.md), are of one plan.
	var own []string
	for k := 1; k <= 2; k++ {
		out := filepath.Join(dir, fmt.Sprintf("own%d", k))
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		args := []string{"run", "--backend", "sqlite:" + filepath.Join(out, "q.db"), "--scenario", "conformance,concurrent", "--seed", "4",
			"--checks", "5", "--ops", "50", "--quiet", "--shard", fmt.Sprintf("%d/2", k), "--out", out}
		if code, stdout, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		own = append(own, out)
	}
	if code, stdout, stderr := run(t, append([]string{"merge", "--out", filepath.Join(dir, "merged-own"), "--quiet"}, own...)...); code != ExitOK {
		t.Errorf("shards with databases in their own folders: exit %d\n%s%s", code, stdout, stderr)
	}
}

// withoutDigest copies a shard's summary without its plan digest, as a
// storecheck that recorded none wrote it.
func withoutDigest(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	delete(v["shard"].(map[string]any), "plan_digest")
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A shard of a plan with fewer runs than shards holds no run: it records
// the plan's seed and digest, says nothing ran (its gate does not say
// PASS; exit 0, it is no failure), matches the schema, and merges with the
// others into the whole plan.
func TestEmptyShardMerges(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	for k := 1; k <= 3; k++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d", k))
		args := []string{"run", "--backend", "memory:", "--seed", "4", "--checks", "2", "--ops", "50", "--quiet", "--shard", fmt.Sprintf("%d/3", k), "--out", out}
		if code, stdout, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		shards = append(shards, out)
	}
	empty, err := reports.ReadSummary(filepath.Join(shards[2], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if empty.Shard == nil || empty.Shard.Plan != 2 || len(empty.Runs) != 0 {
		t.Fatalf("shard 3/3 of the 2-run plan: %+v", empty)
	}
	if empty.Seed != 4 || empty.Shard.PlanDigest == "" {
		t.Errorf("the empty shard records seed %d, plan digest %q; want 4 and the plan's", empty.Seed, empty.Shard.PlanDigest)
	}
	if empty.Verdict == reports.Pass || empty.Gate == nil || empty.Gate.ExitCode != 0 || !strings.HasPrefix(empty.Gate.Headline, "NOTHING RAN: shard 3/3 of a 2-run plan") {
		t.Errorf("the empty shard claims something: verdict %s, gate %+v", empty.Verdict, empty.Gate)
	}
	schema, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "summary.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if b, err := os.ReadFile(filepath.Join(shards[2], "summary.json")); err != nil || json.Unmarshal(b, &v) != nil {
		t.Fatalf("read the empty shard's summary: %v", err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("the empty shard's summary: %v", err)
	}
	merged := filepath.Join(dir, "merged")
	code, stdout, stderr := run(t, append([]string{"merge", "--out", merged, "--quiet"}, shards...)...)
	if code != ExitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(merged, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Runs) != 2 || sum.Seed != 4 || sum.Verdict != reports.Pass {
		t.Errorf("merged: %d runs, seed %d, verdict %s; want 2, 4, PASS", len(sum.Runs), sum.Seed, sum.Verdict)
	}
}

// merge never writes over its input: --out naming a shard's folder (or a
// link to it) would copy each run folder onto itself, emptying its files,
// and a run folder recorded outside its shard's folder (a hand-edited
// summary: "../x") would be read from and written to outside both. Each
// is refused in one line, with nothing written.
func TestMergeNeverWritesOverItsInput(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	for k := 1; k <= 2; k++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d", k))
		args := []string{"run", "--backend", "memory:", "--scenario", "concurrent,conformance", "--seed", "4", "--ops", "50", "--checks", "5",
			"--quiet", "--shard", fmt.Sprintf("%d/2", k), "--out", out}
		if code, stdout, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		shards = append(shards, out)
	}
	history := filepath.Join(shards[0], "runs", "01-memory-concurrent", "history.jsonl")
	before, err := os.ReadFile(history)
	if err != nil || len(before) == 0 {
		t.Fatalf("shard 1's history: %d bytes, %v", len(before), err)
	}
	// A merge into the folder of an earlier report leaves only its own
	// runs there, as a run does; one into the runs/ it would empty is
	// refused.
	earlier := filepath.Join(dir, "earlier")
	stale := filepath.Join(earlier, "runs", "07-memory-concurrent")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "merge", "--out", earlier, "--quiet", shards[0], shards[1]); code != ExitOK {
		t.Fatalf("merge into an earlier report's folder: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an earlier report's run folder is still in the merged one (%v)", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(earlier, "runs")); len(entries) != 2 {
		t.Errorf("%d run folders in the merged report, want 2", len(entries))
	}
	nested := filepath.Join(dir, "outer", "runs", "01-shard")
	if err := os.CopyFS(nested, os.DirFS(shards[0])); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "merge", "--out", filepath.Join(dir, "outer"), "--quiet", nested, shards[1])
	if code != ExitUsage || !strings.Contains(stderr, "which the merge empties") {
		t.Errorf("a shard inside the runs/ the merge would empty: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(nested, "summary.json")); err != nil {
		t.Errorf("the shard inside runs/ was removed: %v", err)
	}
	link := filepath.Join(dir, "latest")
	if err := os.Symlink(shards[0], link); err != nil {
		t.Fatal(err)
	}
	summaries := map[string][]byte{}
	for _, sh := range shards {
		b, err := os.ReadFile(filepath.Join(sh, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		summaries[sh] = b
	}
	for _, out := range []string{shards[0], link, shards[1] + "/"} {
		code, stdout, stderr := run(t, "merge", "--out", out, "--quiet", shards[0], shards[1])
		if code != ExitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "never writes over its input") {
			t.Errorf("merge --out %s: exit %d, stdout %q, stderr %q; want %d and one line", out, code, stdout, stderr, ExitUsage)
		}
	}
	if after, err := os.ReadFile(history); err != nil || string(after) != string(before) {
		t.Errorf("shard 1's history was %d bytes, is %d (%v)", len(before), len(after), err)
	}
	for sh, was := range summaries {
		if now, err := os.ReadFile(filepath.Join(sh, "summary.json")); err != nil || string(now) != string(was) {
			t.Errorf("%s/summary.json was rewritten (%v)", sh, err)
		}
	}
	escaped := filepath.Join(dir, "escaped")
	if err := os.MkdirAll(escaped, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(shards[0], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	v["runs"].([]any)[0].(map[string]any)["dir"] = "../s2/runs"
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(escaped, "summary.json")
	if err := os.WriteFile(edited, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "deep", "merged")
	code, _, stderr = run(t, "merge", "--out", out, "--quiet", edited, shards[1])
	if code != ExitUsage || !strings.Contains(stderr, "is not inside the shard's folder") {
		t.Errorf("a run folder outside its shard: exit %d, stderr %q; want %d", code, stderr, ExitUsage)
	}
	if _, err := os.Stat(filepath.Join(dir, "deep")); !os.IsNotExist(err) {
		t.Errorf("merge wrote though it refused the shard (%v)", err)
	}
}

// A merge is no weaker a gate than its shards: a shard that failed its
// gate on a NOT RUN under --fail-on-not-run makes the merged gate fail on
// it too, even when merge was not given the flag (the report job of a
// workflow whose merge step lost it would otherwise go green).
func TestMergeKeepsTheShardsNotRunRule(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	for k := 1; k <= 2; k++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d", k))
		args := []string{"qualify", "--backends", "memory:,rqlite://127.0.0.1:1?connect_timeout=1s", "--scenarios", "conformance",
			"--checks", "5", "--seed", "3", "--fail-on-not-run", "--shard", fmt.Sprintf("%d/2", k), "--out", out, "--quiet"}
		want := ExitOK
		if k == 2 {
			want = ExitFail // the rqlite run: NOT RUN under --fail-on-not-run
		}
		if code, stdout, stderr := run(t, args...); code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, stdout, stderr)
		}
		shards = append(shards, out)
	}
	code, _, stderr := run(t, "merge", "--out", filepath.Join(dir, "merged"), "--quiet", shards[0], shards[1])
	if code != ExitFail {
		t.Errorf("merge without --fail-on-not-run of a shard that failed on a NOT RUN: exit %d, want %d (%s)", code, ExitFail, stderr)
	}
	sum, err := reports.ReadSummary(filepath.Join(dir, "merged", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g := sum.Gate; g == nil || g.Headline != "GATE FAILED: 1 NOT RUN under --fail-on-not-run" {
		t.Errorf("merged gate %+v", g)
	}
}

// qualifyTwoShards writes the two shards of a small qualify plan into s1
// and s2 of the working folder.
func qualifyTwoShards(t *testing.T) {
	t.Helper()
	for k := 1; k <= 2; k++ {
		if code, _, stderr := run(t, "qualify", "--backends", "memory:", "--scenarios", "conformance,concurrent", "--checks", "3", "--ops", "100",
			"--seed", "4", "--shard", fmt.Sprintf("%d/2", k), "--out", fmt.Sprintf("s%d", k), "--quiet"); code != ExitOK {
			t.Fatalf("shard %d: exit %d: %s", k, code, stderr)
		}
	}
}

// TestFailedMergeLeavesLatest: a merge that fails after making its folder
// under storecheck-out/ (a shard's run folder is gone) exits 2 and leaves
// storecheck-out/latest where it was, at the last complete report — never
// at a folder without a summary.json.
func TestFailedMergeLeavesLatest(t *testing.T) {
	t.Chdir(t.TempDir())
	qualifyTwoShards(t)
	if code, _, stderr := run(t, "run", "--backend", "memory:", "--scenario", "conformance", "--checks", "3", "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	before, err := os.Readlink(filepath.Join(OutRoot, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join("s2", "runs")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "merge", "s1", "s2"); code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("merge without a shard's run folder: exit %d, stderr %q; want 2 and one line", code, stderr)
	}
	after, err := os.Readlink(filepath.Join(OutRoot, "latest"))
	if err != nil || after != before {
		t.Errorf("latest -> %q (%v) after the failed merge, want %q", after, err, before)
	}
	if _, err := os.Stat(filepath.Join(OutRoot, "latest", "summary.json")); err != nil {
		t.Errorf("latest has no summary: %v", err)
	}
}

// TestInterruptedMergeExits130: Ctrl-C during a merge stops the copying
// of the runs' folders (they can be hundreds of MB) and exits 130 in one
// line with no merged summary written, instead of being ignored until the
// merge is done and exiting 0.
func TestInterruptedMergeExits130(t *testing.T) {
	t.Chdir(t.TempDir())
	qualifyTwoShards(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"merge", "--out", "merged", "s1", "s2"}, &stdout, &stderr)
	if code != ExitInterrupted || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 {
		t.Errorf("exit %d, stderr %q; want %d and one line", code, stderr.String(), ExitInterrupted)
	}
	if _, err := os.Stat(filepath.Join("merged", "summary.json")); err == nil {
		t.Error("the interrupted merge wrote a summary")
	}
}
