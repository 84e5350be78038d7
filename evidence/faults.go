package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/storecheck/storecheck/linearizability"
)

// maxFaultLine bounds one line of a fault log.
const maxFaultLine = 1 << 20

// Fault is one injected fault: a line of FaultsFile. Times are nanoseconds
// on the same clock and base as the history's call_ns. Every fault injector
// records this type (package chaos, the replica-lag sweep), and the reports
// read it.
type Fault struct {
	// Fault names the fault ("kill-leader", "partition", …).
	Fault string `json:"fault"`
	// Target is what it hit ("n2"); optional.
	Target string `json:"target,omitempty"`
	// StartNS is when it was injected; EndNS when it was healed, 0 if it
	// was not healed within the run.
	StartNS int64 `json:"start_ns"`
	EndNS   int64 `json:"end_ns"`
	// Detail is free text.
	Detail string `json:"detail,omitempty"`
	// Error says what went wrong injecting or healing it, if anything.
	Error string `json:"error,omitempty"`
	// NotInjected is set when the injection reported an error: the run
	// cannot count on this fault having happened (a heal that failed
	// after an injection that worked leaves it unset).
	NotInjected bool `json:"not_injected,omitempty"`
	// Metrics are figures the fault measured ("new_leader_ms").
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Healed reports whether the fault ended within the run.
func (f Fault) Healed() bool { return f.EndNS != 0 }

// Until is the end of the fault's window: its end, or runEnd if it was never
// healed.
func (f Fault) Until(runEnd int64) int64 {
	if f.Healed() {
		return f.EndNS
	}
	return max(runEnd, f.StartNS)
}

// Validate checks one fault on its own: a name, and a window that does not
// end before it starts.
func (f Fault) Validate() error {
	switch {
	case f.Fault == "":
		return errors.New(`no "fault" name`)
	case f.StartNS < 0:
		return fmt.Errorf("negative start_ns %d", f.StartNS)
	case f.EndNS != 0 && f.EndNS < f.StartNS:
		return fmt.Errorf("end_ns %d before start_ns %d", f.EndNS, f.StartNS)
	}
	return nil
}

// Window is the fault as a window to draw on a visualization.
func (f Fault) Window() linearizability.Window {
	return linearizability.Window{Name: f.Fault + " " + f.Target, Details: f.Detail, Start: f.StartNS, End: f.EndNS}
}

// Windows are the faults' windows; nil for none.
func Windows(faults []Fault) []linearizability.Window {
	if len(faults) == 0 {
		return nil
	}
	out := make([]linearizability.Window, len(faults))
	for i, f := range faults {
		out[i] = f.Window()
	}
	return out
}

// EncodeFaults is the fault log's text: one JSON line per fault. A fault
// that does not Validate is an error, so that every log written reads back.
func EncodeFaults(faults []Fault) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, f := range faults {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("fault %d: %w", i+1, err)
		}
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// WriteFaults writes faults to path as a fault log, atomically: the one
// writer of fault logs.
func WriteFaults(path string, faults []Fault) error {
	b, err := EncodeFaults(faults)
	if err != nil {
		return fmt.Errorf("write faults: %w", err)
	}
	return WriteFileAtomic(path, b)
}

// ReadFaults reads a fault log. A missing file is no faults and no error;
// a line that is not one well-formed fault is an error naming the file and
// line. Blank lines are skipped; unknown fields are allowed, so that a newer
// writer's log still reads.
func ReadFaults(path string) ([]Fault, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read faults: %w", err)
	}
	defer f.Close()
	faults, err := DecodeFaults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return faults, nil
}

// DecodeFaults reads fault log lines from r; an error names the line.
func DecodeFaults(r io.Reader) ([]Fault, error) {
	var faults []Fault
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxFaultLine)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var ft Fault
		if err := json.Unmarshal(raw, &ft); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if err := ft.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		faults = append(faults, ft)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read faults: %w", err)
	}
	return faults, nil
}

// Timeline is a run's fault log as the faults happen: each fault is added
// as it ends, and the folder's FaultsFile is rewritten (atomically) with
// every fault so far, so that a run cut short still leaves the faults it
// made. It is safe for concurrent use.
type Timeline struct {
	mu     sync.Mutex
	path   string
	faults []Fault
}

// Timeline starts the folder's fault log, empty (an existing one is
// replaced); no folder keeps the faults in memory only.
func (f Folder) Timeline() (*Timeline, error) {
	t := &Timeline{path: f.Path(FaultsFile)}
	if t.path != "" {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			return nil, fmt.Errorf("fault timeline: %w", err)
		}
		if err := WriteFaults(t.path, nil); err != nil {
			return nil, fmt.Errorf("fault timeline: %w", err)
		}
	}
	return t, nil
}

// Add records ft and rewrites the log. A fault that does not Validate is
// kept in memory but refused by the file: the error says so.
func (t *Timeline) Add(ft Fault) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.faults = append(t.faults, ft)
	if t.path == "" {
		return nil
	}
	if err := ft.Validate(); err != nil {
		return fmt.Errorf("fault timeline: %s: %w", ft.Fault, err)
	}
	var valid []Fault
	for _, f := range t.faults {
		if f.Validate() == nil {
			valid = append(valid, f)
		}
	}
	if err := WriteFaults(t.path, valid); err != nil {
		return fmt.Errorf("fault timeline: %w", err)
	}
	return nil
}

// Faults returns the faults recorded so far.
func (t *Timeline) Faults() []Fault {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.faults)
}

// Path is the file the timeline is written to, "" for none.
func (t *Timeline) Path() string { return t.path }
