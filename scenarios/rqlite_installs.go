package scenarios

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/backends/rqlite/cluster"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/reports"
)

// A node killed after it installed a leader's snapshot (hashicorp/raft's
// "copied to local snapshot": the snapshot is in the node's snapshot store)
// but before its database was replaced by the snapshot's, and restarted on
// rqlite's fast path ("detected successful prior snapshot operation,
// skipping restore": its database's fingerprint still matches), takes the
// newest snapshot's index as applied although its database never held it:
// the rows committed between its own last snapshot and that one are gone
// from it for good (rqlite#2747). Read from each node's log, life by life
// (process clusters: the supervisor marks every start and exit), and kept
// in unrestoredEvidence; the lines of nodes that did not restore a snapshot
// later carry cluster.UnrestoredInstall (a later restore repairs the
// node: its whole database is replaced).
const (
	unrestoredEvidence = "unrestored-installs.txt"

	logLifeStart   = "=== storecheck: starting "
	logLifeEnd     = "=== storecheck: "
	logInstalled   = "copied to local snapshot"
	logRestored    = "due to restore" // "successfully opened database at … due to restore": the swap
	logFastRestart = "detected successful prior snapshot operation, skipping restore"
	logLifeExit    = "exited at"

	// A snapshot-store reap that SQLite refused ("[snapshot-store] reap
	// failed: executing reap plan: checkpointing WAL: disable
	// autocheckpointing: database disk image is malformed" while the node
	// runs; "failed to open store: failed to create snapshot store:
	// executing reap plan: …" when the plan, interrupted, is re-executed
	// as the node starts and fails again: the node exits).
	logReapPlan   = "executing reap plan"
	logMalformed  = "database disk image is malformed"
	logOpenFailed = "failed to open store"
	reapsEvidence = "snapshot-store-reaps.txt"
)

// unrestoredInstalls reads the node logs in dir (ID.log) and returns one
// line per restart on the fast path over an installed, unrestored
// snapshot whose node never restored a snapshot after it (found), in node
// order, and one per such restart that a later restore repaired. A
// restore replaces the node's whole database with a snapshot's, so a
// repaired restart explains nothing the run saw afterwards, and its line
// does not carry cluster.UnrestoredInstall.
//
// reaps are the snapshot-store reaps SQLite found malformed in a life of a
// node that had restarted on the fast path over an unrestored install in
// that life or an earlier one (a later restore does not undo them: it
// replaces the database, not the snapshot store): the reap folds the
// node's own WAL into the installed snapshot's database, which the node's
// database never was. A life that could not open its store for it carries
// cluster.MalformedSnapshotStore.
func unrestoredInstalls(dir string) (found, repaired, reaps []string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(paths)
	for _, path := range paths {
		f, r, m := unrestoredIn(path)
		found, repaired, reaps = append(found, f...), append(repaired, r...), append(reaps, m...)
	}
	return found, repaired, reaps
}

func unrestoredIn(path string) (found, repaired, reaps []string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil
	}
	defer f.Close()
	node := strings.TrimSuffix(filepath.Base(path), ".log")
	var (
		life           int
		pending        string // the install line of this life not yet restored, if any
		carried, ended string // the previous life's unrestored install, and how it ended
		fastLife       []int  // the life of each line of found
		firstFast      int    // the first life on the fast path over an unrestored install
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, logLifeStart):
			life++
			carried, pending = pending, ""
		case strings.HasPrefix(line, logLifeEnd) && strings.Contains(line, logLifeExit):
			ended = strings.TrimPrefix(line, logLifeEnd)
		case strings.Contains(line, logInstalled):
			pending = strings.TrimSpace(line)
		case strings.Contains(line, logRestored):
			pending = ""
			// The database is the restored snapshot's now: what an
			// earlier fast restart missed is back.
			for _, l := range fastLife {
				repaired = append(repaired, fmt.Sprintf("%s: life %d took the fast path over a snapshot installed in life %d and not restored, then restored one in life %d (%q): repaired",
					node, l, l-1, life, strings.TrimSpace(line)))
			}
			found, fastLife = nil, nil
		case strings.Contains(line, logFastRestart) && carried != "":
			found = append(found, fmt.Sprintf("%s: life %d %s (%q): life %d ended (%s) after %q with no restore after it",
				node, life, cluster.UnrestoredInstall, strings.TrimSpace(line), life-1, ended, carried))
			fastLife = append(fastLife, life)
			if firstFast == 0 {
				firstFast = life
			}
			carried = ""
		case firstFast > 0 && strings.Contains(line, logReapPlan) && strings.Contains(line, logMalformed):
			if strings.Contains(line, logOpenFailed) {
				reaps = append(reaps, fmt.Sprintf("%s: life %d %s (life %d took the fast path over a snapshot installed in life %d and never restored): %q",
					node, life, cluster.MalformedSnapshotStore, firstFast, firstFast-1, strings.TrimSpace(line)))
				continue
			}
			reaps = append(reaps, fmt.Sprintf("%s: life %d could not reap its snapshot store (life %d took the fast path over a snapshot installed in life %d and never restored): %q",
				node, life, firstFast, firstFast-1, strings.TrimSpace(line)))
		}
	}
	return found, repaired, reaps
}

// keepUnrestored counts the restarts over an unrestored install in the
// run's server logs that no later restore repaired (metric
// unrestored_installs; the repaired ones unrestored_installs_repaired),
// keeps them in unrestoredEvidence, and names them in a FAIL's reason.
// Only the restarts of a node that the checks after the heal found short
// (missing an acknowledged version, or its tables unlike a node that never
// restarted so) carry cluster.UnrestoredInstall: a damaged node that shows
// nothing missing after the heal explains nothing the run saw, and a FAIL
// beside it must not pass as the known issue (metric
// unrestored_installs_unseen).
func keepUnrestored(p Params, out *Result, after afterHeal) {
	dir := folder(p).LogDir()
	if dir == "" {
		return
	}
	found, repaired, reaps := unrestoredInstalls(dir)
	if len(found)+len(repaired) == 0 {
		return
	}
	if out.Metrics == nil {
		out.Metrics = map[string]float64{}
	}
	keepReaps(p, out, reaps)
	if len(repaired) > 0 {
		out.Metrics["unrestored_installs_repaired"] = float64(len(repaired))
	}
	damaged := map[string]bool{}
	for _, line := range found {
		node, _, _ := strings.Cut(line, ":")
		damaged[node] = true
	}
	var shown, unseen []string
	for _, line := range found {
		node, _, _ := strings.Cut(line, ":")
		if after.showsDamage(node, damaged) {
			shown = append(shown, line)
			continue
		}
		unseen = append(unseen, strings.Replace(line, cluster.UnrestoredInstall, unseenInstall, 1))
	}
	keep(p, unrestoredEvidence, []byte(strings.Join(slices.Concat(shown, unseen, repaired), "\n")+"\n"))
	if len(found) == 0 {
		return
	}
	out.Metrics["unrestored_installs"] = float64(len(found))
	if len(unseen) > 0 {
		out.Metrics["unrestored_installs_unseen"] = float64(len(unseen))
	}
	if out.Verdict == reports.Fail && len(shown) > 0 {
		out.Reason += fmt.Sprintf(" (%d node restart(s) on the fast path over a snapshot installed but never restored, rqlite#2747, on a node the checks after the heal found short: %s)", len(shown), unrestoredEvidence)
	}
}

// keepReaps keeps the snapshot-store reaps SQLite found malformed after a
// fast restart over an unrestored install (unrestoredInstalls) in
// reapsEvidence, counts them (metric malformed_reaps; the lives that could
// not open their store for it, unopenable_snapshot_stores) and names the
// latter in a FAIL's reason.
func keepReaps(p Params, out *Result, reaps []string) {
	if len(reaps) == 0 {
		return
	}
	keepLines(p, reapsEvidence, reaps)
	unopenable := 0
	for _, line := range reaps {
		if strings.Contains(line, cluster.MalformedSnapshotStore) {
			unopenable++
		}
	}
	out.Metrics["malformed_reaps"] = float64(len(reaps) - unopenable)
	if unopenable == 0 {
		return
	}
	out.Metrics["unopenable_snapshot_stores"] = float64(unopenable)
	if out.Verdict == reports.Fail {
		out.Reason += fmt.Sprintf(" (%d node start(s) refused: the snapshot store, reaped after a fast restart over a snapshot installed but never restored, is malformed: %s)", unopenable, reapsEvidence)
	}
}

// unseenInstall replaces cluster.UnrestoredInstall in the line of a restart
// whose node showed nothing missing after the heal: the same finding,
// without the known issue's signature.
const unseenInstall = "came back over a snapshot it installed but never restored (fast path), yet after the heal held every acknowledged version and matched the nodes that never did"

// showsDamage says whether the checks after the heal found node short:
// missing an acknowledged version, or its tables unlike those of a node
// that is not in damaged. When every node read is in damaged (each had
// such a restart: the fault moves from node to node), the other damaged
// nodes are what it is compared with: two of them that differ have no
// sound node to tell which lost what, and both are shown. Without the
// nodes' tables (the checks stopped before reading them) nothing shows.
func (a afterHeal) showsDamage(node string, damaged map[string]bool) bool {
	var mine *nodeTables
	sound := false
	for i := range a.nodes {
		if a.nodes[i].ID == node {
			mine = &a.nodes[i]
		} else if !damaged[a.nodes[i].ID] && a.nodes[i].Dump != nil {
			sound = true
		}
	}
	if mine == nil || mine.Dump == nil {
		return false
	}
	if durable(mine.Dump, a.acked) != nil {
		return true
	}
	for _, other := range a.nodes {
		if other.ID != node && (!sound || !damaged[other.ID]) && other.Dump != nil &&
			len(model.Diff(other.Dump, mine.Dump, model.DiffOptions{ExactSeqs: true, Limit: 1})) > 0 {
			return true
		}
	}
	return false
}

// installsEvidence is the folder, within a kill-during-install run's, that
// keeps a copy of the killed follower's files each time it was SIGKILLed on
// its install line (keepInstallCopies): K-ID/ for the K-th such kill of
// the run, and installsIndex saying when each was taken.
const (
	installsEvidence = "installs"
	installsIndex    = "index.txt"
)

// nodeSaver is a cluster that can copy a node's data folder (a cluster of
// processes: cluster.Processes.SaveNode).
type nodeSaver interface {
	SaveNode(ctx context.Context, id, dst string, leaveOut ...string) error
}

// keepInstallCopies returns chaos.KillDuringInstall's Killed hook for a
// run whose evidence goes to out: it copies the killed follower's data
// folder, but its Raft log (raft.db, megabytes a copy, and whole on the
// node afterwards), into installsEvidence. The node is down, so the copy
// is what the interrupted install left: the installed snapshot in the
// snapshot store (wsnapshots/) and the database it was not restored into
// (db.sqlite, with the clean_snapshot fingerprint its fast path will
// trust). A copy that failed says so in installsIndex (the verdict stands
// without it). nil when there is no folder or the cluster cannot copy a
// node's files.
func keepInstallCopies(out string, cl any) func(context.Context, string) {
	saver, ok := cl.(nodeSaver)
	f := evidence.At(out)
	if !ok || f.None() {
		return nil
	}
	var k atomic.Int32
	return func(ctx context.Context, id string) {
		name := fmt.Sprintf("%d-%s", k.Add(1), id)
		at := time.Now().UTC()
		err := saver.SaveNode(ctx, id, f.Phase(installsEvidence).Path(name), "raft.db")
		line := fmt.Sprintf("%s: %s SIGKILLed on its install line at %s; copy of its data folder without raft.db", name, id, at.Format("15:04:05.000"))
		if err != nil {
			line += fmt.Sprintf(" (incomplete: %v)", err)
		}
		_ = appendLine(f.Phase(installsEvidence).Path(installsIndex), line)
	}
}

// appendLine adds line to the file at path, creating it.
func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(fh, line); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
