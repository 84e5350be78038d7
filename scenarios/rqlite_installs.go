package scenarios

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/storecheck/storecheck/internal/knownissues"
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
// in unrestoredEvidence; its lines carry knownissues.UnrestoredInstall.
const (
	unrestoredEvidence = "unrestored-installs.txt"

	logLifeStart   = "=== storecheck: starting "
	logLifeEnd     = "=== storecheck: "
	logInstalled   = "copied to local snapshot"
	logRestored    = "due to restore" // "successfully opened database at … due to restore": the swap
	logFastRestart = "detected successful prior snapshot operation, skipping restore"
	logLifeExit    = "exited at"
)

// unrestoredInstalls reads the node logs in dir (ID.log) and returns one
// line per restart on the fast path over an installed, unrestored
// snapshot, in node order.
func unrestoredInstalls(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(paths)
	var found []string
	for _, path := range paths {
		found = append(found, unrestoredIn(path)...)
	}
	return found
}

func unrestoredIn(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	node := strings.TrimSuffix(filepath.Base(path), ".log")
	var (
		found          []string
		life           int
		pending        string // the install line of this life not yet restored, if any
		carried, ended string // the previous life's unrestored install, and how it ended
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
		case strings.Contains(line, logFastRestart) && carried != "":
			found = append(found, fmt.Sprintf("%s: life %d %s (%q): life %d ended (%s) after %q with no restore after it",
				node, life, knownissues.UnrestoredInstall, strings.TrimSpace(line), life-1, ended, carried))
			carried = ""
		}
	}
	return found
}

// keepUnrestored counts the restarts over an unrestored install in the
// run's server logs (metric unrestored_installs), keeps them in
// unrestoredEvidence, and names them in a FAIL's reason.
func keepUnrestored(p Params, out *Result) {
	dir := folder(p).LogDir()
	if dir == "" {
		return
	}
	found := unrestoredInstalls(dir)
	if len(found) == 0 {
		return
	}
	if out.Metrics == nil {
		out.Metrics = map[string]float64{}
	}
	out.Metrics["unrestored_installs"] = float64(len(found))
	keep(p, unrestoredEvidence, []byte(strings.Join(found, "\n")+"\n"))
	if out.Verdict == reports.Fail {
		out.Reason += fmt.Sprintf(" (%d node restart(s) on the fast path over a snapshot installed but never restored, rqlite#2747: %s)", len(found), unrestoredEvidence)
	}
}
