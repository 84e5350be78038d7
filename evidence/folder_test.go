package evidence

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/linearizability"
)

// lostUpdate is an illegal history from the checker's golden files.
func lostUpdate(t *testing.T) (linearizability.History, *linearizability.Report) {
	t.Helper()
	h, err := linearizability.LoadFile(filepath.Join("..", "linearizability", "testdata", "lost_update.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := linearizability.Check(context.Background(), h, linearizability.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != linearizability.Illegal {
		t.Fatalf("lost_update.jsonl is %s, want Illegal", rep.Verdict)
	}
	return h, rep
}

// noTemporaries fails if a write left a temporary file in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

// TestFolderWritesEvidence: the history reads back and re-checks to the
// same verdict, the violations file has today's format, and the
// visualization shows the fault windows; every file lands under its name
// and nothing else is left.
func TestFolderWritesEvidence(t *testing.T) {
	ctx := context.Background()
	h, rep := lostUpdate(t)
	dir := filepath.Join(t.TempDir(), "run") // created by the first write
	f := At(dir)

	path, err := f.WriteHistory(h)
	if err != nil || path != filepath.Join(dir, HistoryFile) {
		t.Fatalf("WriteHistory: %q, %v", path, err)
	}
	again, err := linearizability.CheckFile(ctx, path, linearizability.Options{})
	if err != nil || again.Verdict != rep.Verdict {
		t.Fatalf("the saved history re-checks to %v (%v), want %s", again, err, rep.Verdict)
	}

	v := VerdictOf(rep)
	v.Notes = append(v.Notes, "porcupine did not decide 1 partitions within 1s")
	if path, err = f.WriteVerdict(v); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if lines[0] != "verdict: FAIL (porcupine: Illegal)" || len(lines) != 1+len(rep.Violations)+1 ||
		lines[1] != rep.Violations[0].Error() || lines[len(lines)-1] != "note: porcupine did not decide 1 partitions within 1s" {
		t.Errorf("%s:\n%s", ViolationsFile, text)
	}

	faults := []Fault{{Fault: "kill-leader", Target: "n2", StartNS: 1, EndNS: 2, Detail: "SIGKILL"}}
	if path, err = f.WriteVisualization(ctx, h, rep, linearizability.Options{}, faults); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(path)
	if !strings.Contains(string(html), "kill-leader n2") {
		t.Error("the visualization does not draw the fault window")
	}
	if path, err = f.WriteFaults(faults); err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != FaultsFile {
		t.Errorf("WriteFaults wrote %s, want %s", path, FaultsFile)
	}
	if got, err := f.ReadFaults(); err != nil || !reflect.DeepEqual(got, faults) {
		t.Errorf("faults read back %+v, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{FaultsFile, HistoryFile, ViolationsFile, VisualizationFile}; !reflect.DeepEqual(names, want) {
		t.Errorf("folder holds %v, want %v", names, want)
	}
}

// TestVerdictText is violations.txt's format, byte for byte.
func TestVerdictText(t *testing.T) {
	v := Verdict{Verdict: linearizability.Ok, Violations: []string{"isolation: a commit succeeded"}, Notes: []string{"n1", "n2"}}
	want := "verdict: FAIL (porcupine: Ok; another check found a violation)\nisolation: a commit succeeded\nnote: n1\nnote: n2\n"
	if got := v.Text(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (Verdict{Verdict: linearizability.Unknown}).Text(); got != "verdict: FAIL (porcupine: Unknown: the checker timed out, nothing is proved)\n" {
		t.Errorf("no violations: %q", got)
	}
	if got := (Verdict{Verdict: linearizability.Ok}).Text(); got != "verdict: PASS (porcupine: Ok)\n" {
		t.Errorf("a passing run: %q", got)
	}
	// Only a global check failed: porcupine's own verdict, and which
	// guarantee broke, not "porcupine: Illegal".
	v = Verdict{Verdict: linearizability.Illegal, Porcupine: linearizability.Ok, Broken: []string{"timers"}, Violations: []string{"timers: x"}}
	if got := v.Word(); got != "FAIL (porcupine: Ok; another check found a violation: timers)" {
		t.Errorf("a global check's failure: %q", got)
	}
	v.Porcupine = linearizability.Illegal
	if got := v.Word(); got != "FAIL (porcupine: Illegal)" {
		t.Errorf("porcupine's failure: %q", got)
	}
}

// TestVerdictOfNamesTheCheck: a history porcupine accepts, failed by a
// global check only, is headed by porcupine's Ok and the guarantee broken,
// while the verdict stays Illegal.
func TestVerdictOfNamesTheCheck(t *testing.T) {
	rep, err := linearizability.CheckFile(context.Background(), filepath.Join("..", "linearizability", "testdata", "xf1_due_not_due.jsonl"), linearizability.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := VerdictOf(rep)
	if v.Verdict != linearizability.Illegal || v.Word() != "FAIL (porcupine: Ok; another check found a violation: timers)" {
		t.Errorf("verdict %s, word %q", v.Verdict, v.Word())
	}
}

// TestNoFolder: the zero Folder keeps nothing and writes nowhere.
func TestNoFolder(t *testing.T) {
	var f Folder
	h, rep := lostUpdate(t)
	wd, _ := os.Getwd()
	before, _ := os.ReadDir(wd)
	for _, write := range []func() (string, error){
		func() (string, error) { return f.WriteHistory(h) },
		func() (string, error) { return f.WriteVerdict(VerdictOf(rep)) },
		func() (string, error) { return f.WriteFaults([]Fault{{Fault: "x"}}) },
		func() (string, error) { return f.WriteFile("x.txt", []byte("x")) },
	} {
		if path, err := write(); path != "" || err != nil {
			t.Errorf("no folder wrote %q, %v", path, err)
		}
	}
	if f.LogDir() != "" || f.Path(HistoryFile) != "" || !f.Phase("p").None() {
		t.Error("no folder has paths")
	}
	if faults, err := f.ReadFaults(); faults != nil || err != nil {
		t.Errorf("no folder read %v, %v", faults, err)
	}
	tl, err := f.Timeline()
	if err != nil || tl.Add(Fault{Fault: "x"}) != nil || len(tl.Faults()) != 1 || tl.Path() != "" {
		t.Errorf("an in-memory timeline: %v", err)
	}
	after, _ := os.ReadDir(wd)
	if len(after) != len(before) {
		t.Error("no folder wrote into the working folder")
	}
}

// TestPhaseAndPromote: a phase is a folder of its own; promoting copies its
// history up and skips what it lacks.
func TestPhaseAndPromote(t *testing.T) {
	f := At(t.TempDir())
	ph := f.Phase("lag_50ms")
	if ph.Dir() != filepath.Join(f.Dir(), "lag_50ms") || ph.LogDir() != filepath.Join(ph.Dir(), LogsDir) {
		t.Fatalf("phase %q, logs %q", ph.Dir(), ph.LogDir())
	}
	h, _ := lostUpdate(t)
	if _, err := ph.WriteHistory(h); err != nil {
		t.Fatal(err)
	}
	if err := f.Promote("lag_50ms", HistoryFile, FaultsFile); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(ph.Path(HistoryFile))
	b, err := os.ReadFile(f.Path(HistoryFile))
	if err != nil || string(a) != string(b) {
		t.Errorf("promoted history differs (%v)", err)
	}
	if _, err := os.Stat(f.Path(FaultsFile)); !os.IsNotExist(err) {
		t.Errorf("a fault log the phase lacks was promoted: %v", err)
	}
	noTemporaries(t, f.Dir())
	noTemporaries(t, ph.Dir())
}

// TestWriteFileAtomicFailure: a write that fails leaves the old file, and
// no temporary one.
func TestWriteFileAtomicFailure(t *testing.T) {
	f := At(t.TempDir())
	if _, err := f.WriteFile(ViolationsFile, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	_, err := f.write(ViolationsFile, func(w io.Writer) error {
		w.Write([]byte("half"))
		return os.ErrClosed
	})
	if err == nil {
		t.Fatal("a failed fill was not an error")
	}
	if b, _ := os.ReadFile(f.Path(ViolationsFile)); string(b) != "old\n" {
		t.Errorf("the old file was replaced by %q", b)
	}
	noTemporaries(t, f.Dir())
}
