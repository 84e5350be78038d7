package evidence

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/storecheck/storecheck/linearizability"
)

// The files and folders of a run's folder. Old run folders use the same
// names; renaming one breaks their rendering.
const (
	// HistoryFile is the history, as linearizability.SaveFile writes it.
	HistoryFile = "history.jsonl"
	// ViolationsFile is the verdict and its violations (Verdict.Text).
	ViolationsFile = "violations.txt"
	// VisualizationFile is porcupine's visualization of the history.
	VisualizationFile = "visualization.html"
	// FaultsFile is the fault log: one Fault per line.
	FaultsFile = "faults.jsonl"
	// LogsDir holds the logs of the servers the run started (ID.log,
	// sqld.log).
	LogsDir = "logs"
	// RapidLogFile is the output of a property-based run (rapid).
	RapidLogFile = "rapid.log"
	// CyclesFile is the crash-recovery workload's cycle log: one line
	// per kill-and-recover cycle, then "note: …" lines.
	CyclesFile = "cycles.txt"
	// CutsFile is the power-loss scenario's cuts: what each discarded and
	// how many acknowledged commits the recovery after it lost, and the
	// sync calls the store made, per kind and per file (JSON).
	CutsFile = "cuts.json"
	// DisksDir holds, for a failed power-loss run, the disk image (the
	// database's folder as the power cut left it) after each of its last
	// two cuts: disks/cut-N/.
	DisksDir = "disks"
	// SweepJSONFile and SweepMDFile are a replica-lag sweep's figures
	// (package replicalag writes them; their content is its own).
	SweepJSONFile = "sweep.json"
	SweepMDFile   = "sweep.md"
)

// The lease-stall workload keeps one history, visualization and notes file
// per mode ("goroutines", "processes"); its history is a lease history
// (leases.WriteJSONL), not an execution-store one, hence names of its own.

// ModeHistoryFile is the lease history of one lease-stall mode (storecheck
// check re-checks it, as it does HistoryFile).
func ModeHistoryFile(mode string) string { return "history-" + mode + ".jsonl" }

// ModeVisualizationFile is the visualization of one lease-stall mode.
func ModeVisualizationFile(mode string) string { return "visualization-" + mode + ".html" }

// ModeNotesFile is the summary and notes of one lease-stall mode.
func ModeNotesFile(mode string) string { return "notes-" + mode + ".txt" }

// Folder is a run's folder, or a phase's folder inside one. The zero Folder
// is no folder: a run without one keeps nothing, so every write on it does
// nothing and returns "" and no error, and every path is "". A write creates
// the folder if need be.
type Folder struct {
	dir string
}

// At is the folder dir; "" is no folder.
func At(dir string) Folder { return Folder{dir: dir} }

// Dir is the folder's path, "" for none.
func (f Folder) Dir() string { return f.dir }

// None reports whether f is no folder.
func (f Folder) None() bool { return f.dir == "" }

// Path is the path of the file name in the folder, "" for no folder.
func (f Folder) Path(name string) string {
	if f.dir == "" {
		return ""
	}
	return filepath.Join(f.dir, name)
}

// LogDir is the folder servers the run starts write their logs to (logs/),
// "" for no folder. It is not created here; the server that writes a log
// creates it.
func (f Folder) LogDir() string { return f.Path(LogsDir) }

// Phase is the folder of one phase of the run (a sweep level), inside this
// one; no folder inside no folder.
func (f Folder) Phase(name string) Folder { return Folder{dir: f.Path(name)} }

// WriteHistory saves h as HistoryFile (re-checkable offline with
// linearizability.CheckFile) and returns its path.
func (f Folder) WriteHistory(h linearizability.History) (string, error) {
	return f.write(HistoryFile, func(w io.Writer) error { return linearizability.WriteJSONL(w, h) })
}

// WriteVerdict writes v as ViolationsFile and returns its path.
func (f Folder) WriteVerdict(v Verdict) (string, error) {
	return f.WriteFile(ViolationsFile, []byte(v.Text()))
}

// WriteVisualization writes porcupine's visualization of h as
// VisualizationFile, with the windows of faults drawn over it, and returns
// its path. opt bounds the search (its Timeout) as in linearizability.Check.
func (f Folder) WriteVisualization(ctx context.Context, h linearizability.History, rep *linearizability.Report, opt linearizability.Options, faults []Fault) (string, error) {
	return f.write(VisualizationFile, func(w io.Writer) error {
		return linearizability.VisualizeWindows(ctx, w, h, rep, opt, Windows(faults))
	})
}

// WriteFaults writes faults as FaultsFile and returns its path.
func (f Folder) WriteFaults(faults []Fault) (string, error) {
	if f.dir == "" {
		return "", nil
	}
	return f.Path(FaultsFile), WriteFaults(f.Path(FaultsFile), faults)
}

// ReadFaults reads the folder's FaultsFile; see ReadFaults.
func (f Folder) ReadFaults() ([]Fault, error) {
	if f.dir == "" {
		return nil, nil
	}
	return ReadFaults(f.Path(FaultsFile))
}

// WriteFile writes data as the file name in the folder, atomically, and
// returns its path.
func (f Folder) WriteFile(name string, data []byte) (string, error) {
	return f.write(name, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// Promote copies the files names of the phase folder phase up into this
// folder, where the reports look for a run's history and faults; a name the
// phase lacks is skipped.
func (f Folder) Promote(phase string, names ...string) error {
	if f.dir == "" {
		return nil
	}
	for _, name := range names {
		data, err := os.ReadFile(f.Phase(phase).Path(name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
		if _, err := f.WriteFile(name, data); err != nil {
			return err
		}
	}
	return nil
}

// write creates the folder and writes the file name in it through fill,
// atomically.
func (f Folder) write(name string, fill func(io.Writer) error) (string, error) {
	if f.dir == "" {
		return "", nil
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return "", fmt.Errorf("evidence: %w", err)
	}
	path := f.Path(name)
	if err := writeAtomic(path, fill); err != nil {
		return "", fmt.Errorf("evidence: %w", err)
	}
	return path, nil
}

// WriteFileAtomic writes data to path through a temporary file beside it,
// renamed into place: a reader never sees a half-written file, and a failed
// write leaves none. The file is readable by all (0644), like anything a
// CI job publishes.
func WriteFileAtomic(path string, data []byte) error {
	return writeAtomic(path, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// writeAtomic is WriteFileAtomic with the content written by fill.
func writeAtomic(path string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fill(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Verdict is what ViolationsFile says: the checker's verdict, the
// violations found (the checker's, and those of checks outside it), and
// notes on what was not checked.
type Verdict struct {
	Verdict linearizability.Verdict
	// Porcupine is porcupine's own verdict on the partitions, when it
	// differs from Verdict's reading: Ok (or Unknown) when every partition
	// linearized (or some went undecided) and only a global check found a
	// violation, which makes Verdict Illegal. "" reads as Verdict.
	Porcupine linearizability.Verdict
	// Broken names the guarantees the checker found broken, in
	// linearizability.AllGuarantees' order.
	Broken     []string
	Violations []string
	Notes      []string
}

// Word is the verdict in the reports' words: "PASS (porcupine: Ok)",
// "FAIL (porcupine: Illegal)", "FAIL (porcupine: Ok; another check found a
// violation: timers)" (the guarantees named when known), "FAIL (porcupine:
// Unknown: the checker timed out, nothing is proved)".
func (v Verdict) Word() string {
	p := v.Porcupine
	if p == "" {
		p = v.Verdict
	}
	other := "another check found a violation"
	if len(v.Broken) > 0 {
		other += ": " + strings.Join(v.Broken, ", ")
	}
	switch {
	case v.Verdict == linearizability.Ok && len(v.Violations) == 0:
		return "PASS (porcupine: Ok)"
	case v.Verdict == linearizability.Unknown:
		return "FAIL (porcupine: Unknown: the checker timed out, nothing is proved)"
	case p == linearizability.Ok, p == linearizability.Unknown:
		return fmt.Sprintf("FAIL (porcupine: %s; %s)", p, other)
	}
	return fmt.Sprintf("FAIL (porcupine: %s)", p)
}

// VerdictOf is the verdict, violations and notes of a checker's report,
// with porcupine's own verdict and the guarantees broken.
func VerdictOf(rep *linearizability.Report) Verdict {
	v := Verdict{Verdict: rep.Verdict, Notes: rep.Notes, Broken: linearizability.Guarantees(rep.Err)}
	switch {
	case len(rep.Illegal) > 0:
		v.Porcupine = linearizability.Illegal
	case len(rep.TimedOut) > 0:
		v.Porcupine = linearizability.Unknown
	default:
		v.Porcupine = linearizability.Ok
	}
	for _, e := range rep.Violations {
		v.Violations = append(v.Violations, e.Error())
	}
	return v
}

// Text is the file's text: "verdict: PASS|FAIL (porcupine: X)", then one
// line per violation, then one "note: …" line per note. The words are the
// reports' (PASS when the checker found the history linearizable and no
// other check a violation; FAIL otherwise, an unknown verdict included),
// with the checker's own in parentheses.
func (v Verdict) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\n", v.Word())
	for _, s := range v.Violations {
		fmt.Fprintln(&b, s)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
