package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/storecheck/storecheck/chaos/lossyfs"
	"github.com/storecheck/storecheck/evidence"
	"github.com/storecheck/storecheck/procfault"
	"github.com/storecheck/storecheck/reports"
)

// powerLossScenario kills worker processes and cuts the power under them
// (a FUSE file system that drops every unsynced write), and judges each
// recovery by what the URL's synchronous setting promises.
func powerLossScenario() Scenario {
	return Scenario{
		Name:   "power-loss",
		Length: time.Second,
		Summary: "a worker process commits on a file in a lossy FUSE mount until SIGKILLed at a seeded moment, then the power is cut (unsynced writes are lost, some pages of them torn through); " +
			"each recovery is judged by the URL's synchronous=: FULL/EXTRA keep every acknowledged commit, NORMAL may lose only a suffix of them (each whole, the file sound; commits an earlier cut lost may come back whole, reported), OFF is reported; on execution stores and run stores",
		Needs: procfault.PowerNeeds(),
		Run:   runPowerLoss,
	}
}

func runPowerLoss(ctx context.Context, t Target, p Params) Result {
	cmd, err := procfault.SelfCommand()
	if err != nil {
		return Result{Verdict: reports.NotRun, Reason: err.Error()}
	}
	// Torn cuts: part of the unsynced pages reach the disk too, drawn from
	// the seed, as when power fails mid-write; a store must cope with any
	// subset of what it did not sync.
	opt := procfault.PowerOptions{URL: t.URL, Seed: p.Seed, Cycles: p.Cycles, Command: cmd, Dir: p.OutDir, Torn: true}
	if p.OutDir != "" {
		opt.Disks = filepath.Join(p.OutDir, evidence.DisksDir)
	}
	if p.Progress != nil {
		opt.Ops, opt.Fault = &p.Progress.Ops, func(f string) { p.Progress.Fault.Store(f) }
	}
	res, err := procfault.PowerLoss(ctx, opt)
	if res != nil {
		keepLines(p, evidence.CyclesFile, append(cutLines(res), withPrefix("note: ", res.Notes)...))
		record := struct {
			Synchronous string                          `json:"synchronous"`
			Promise     string                          `json:"promise"`
			Cuts        []procfault.CutRecord           `json:"cuts"`
			Syncs       map[lossyfs.SyncKind]int64      `json:"syncs"`
			FileSyncs   map[string]lossyfs.PathCounters `json:"file_syncs"`
		}{res.Synchronous, res.Promise, res.Cuts, res.Syncs, res.FileSyncs}
		if data, err := json.MarshalIndent(record, "", "  "); err == nil {
			keep(p, evidence.CutsFile, data)
		}
	}
	if out, done := procOutcome(err); done {
		return out
	}
	out := Result{Ops: int64(res.Acked), Metrics: powerMetrics(res), Verdict: reports.Pass, Reason: powerLine(res)}
	if res.Err != nil {
		out.Verdict, out.Guarantee = reports.Fail, procfault.Guarantee(res.Err)
		out.Reason = singleLine(fmt.Sprintf("%v (judged by synchronous=%s: %s)", res.Err, res.Synchronous, res.Promise))
	}
	return out
}

// cutLines is the cycle log with what each cut discarded and the recovery
// after it lost.
func cutLines(res *procfault.PowerResult) []string {
	lines := slices.Clone(res.Cycle)
	for i := range lines {
		if i >= len(res.Cuts) {
			break
		}
		c := res.Cuts[i]
		lines[i] += fmt.Sprintf("; power cut %d: %d files with unsynced data, %d entry changes discarded; %d acknowledged %s lost",
			c.Cut, c.Files, c.EntryChanges, c.Lost, res.Unit)
		if c.CameBack > 0 || c.LostAt > 0 {
			lines[i] += fmt.Sprintf("; instead, %d acknowledged %s that cut %d lost came back (a branch written on the same tables: NORMAL promises whole transactions in order, not durability)", c.CameBack, res.Unit, c.LostAt)
		}
		if c.Unexplained != "" {
			lines[i] += "; recovery unexplained (started again on an empty file): " + c.Unexplained
		}
	}
	return lines
}

// powerLine sums a passing run up in one line.
func powerLine(res *procfault.PowerResult) string {
	most := 0
	for _, c := range res.Cuts {
		most = max(most, c.Lost)
	}
	s := fmt.Sprintf("synchronous=%s: %d power cuts, %d %s acknowledged, %d lost (at most %d at one cut); %d fsyncs of files, %d of folders",
		res.Synchronous, len(res.Cuts), res.Acked, res.Unit, res.Lost, most, res.Syncs["fsync"]+res.Syncs["fdatasync"], res.Syncs["fsync-dir"]+res.Syncs["fdatasync-dir"])
	if n := cameBack(res); n > 0 {
		s += fmt.Sprintf("; %d %s that a cut lost came back at a later one, in place of those written since (%d recoveries)", res.CameBack, res.Unit, n)
	}
	if res.Unexplained > 0 {
		s += fmt.Sprintf("; %d recoveries damaged or unexplained (OFF promises nothing)", res.Unexplained)
	}
	return s
}

func powerMetrics(res *procfault.PowerResult) map[string]float64 {
	m := crashMetrics(res.CrashResult)
	most := 0
	for _, c := range res.Cuts {
		most = max(most, c.Lost)
	}
	m["power_cuts"] = float64(len(res.Cuts))
	m["commits_lost"] = float64(res.Lost)
	m["commits_lost_max_per_cut"] = float64(most)
	m["recoveries_unexplained"] = float64(res.Unexplained)
	m["commits_came_back"] = float64(res.CameBack)
	m["recoveries_from_a_lost_branch"] = float64(cameBack(res))
	for kind, n := range res.Syncs {
		m["syncs_"+string(kind)] = float64(n)
	}
	return m
}

// cameBack counts the recoveries that held a branch an earlier cut lost.
func cameBack(res *procfault.PowerResult) int {
	n := 0
	for _, c := range res.Cuts {
		if c.LostAt > 0 {
			n++
		}
	}
	return n
}
