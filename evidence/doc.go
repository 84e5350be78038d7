// Package evidence owns a run's folder: what a run leaves behind for the
// reports and for whoever debugs it. It names every file a run writes (one
// place: the constants below), writes them — the history, the verdict and
// its violations, porcupine's visualization, the fault log — and reads the
// fault log back. The reports render a folder; they never define what is
// in it.
//
// A run's folder:
//
//	history.jsonl       the checked history (linearizability.LoadFile reads it)
//	violations.txt      "verdict: PASS|FAIL (porcupine: X)", one line per violation, "note: …" lines
//	visualization.html  porcupine's visualization, fault windows drawn in
//	faults.jsonl        one Fault per line, on the history's clock
//	logs/               the logs of the servers the run started
//	rapid.log           a property run's output
//	cycles.txt          crash-recovery's kill-and-recover cycles
//	sweep.json, sweep.md  a replica-lag sweep's figures (replicalag's own documents)
//	history-MODE.jsonl, visualization-MODE.html, notes-MODE.txt
//	                    the lease-stall workload's files, one set per mode
//	PHASE/              a phase's own folder (a replica-lag sweep level), laid
//	                    out the same way
//
// In the layering (model, backends, workloads and faults, checkers,
// evidence, reports, scenarios, cli) the package sits under the reports: it
// imports the checker (linearizability) and nothing above it, so that a
// workload or a fault injector can write its evidence without importing the
// renderer.
package evidence
