package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FaultsFile is the name of the fault log a run with fault injection writes
// in its folder.
const FaultsFile = "faults.jsonl"

// maxFaultLine bounds one line of a fault log.
const maxFaultLine = 1 << 20

// Fault is one injected fault: a line of faults.jsonl. Times are nanoseconds
// on the same clock and base as the history's call_ns.
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

// validate checks one fault on its own.
func (f Fault) validate() error {
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

// ReadFaults reads a faults.jsonl. A missing file is no faults and no error;
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

// WriteFaults writes faults to path as a fault log, atomically; for a
// fault-injecting scenario that keeps its faults in memory and writes them
// once the run ends.
func WriteFaults(path string, faults []Fault) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, f := range faults {
		if err := f.validate(); err != nil {
			return fmt.Errorf("write faults: fault %d: %w", i+1, err)
		}
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("write faults: %w", err)
		}
	}
	return WriteFileAtomic(path, buf.Bytes())
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
		if err := ft.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		faults = append(faults, ft)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read faults: %w", err)
	}
	return faults, nil
}
