package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
)

// Event is one fault of a run, as a line of faults.jsonl: the fields of
// reports.Fault, plus what went wrong and what was measured. Times are
// nanoseconds on the history's clock.
type Event struct {
	Fault   string             `json:"fault"`
	Target  string             `json:"target,omitempty"`
	StartNS int64              `json:"start_ns"`
	EndNS   int64              `json:"end_ns"`
	Detail  string             `json:"detail,omitempty"`
	Error   string             `json:"error,omitempty"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Timeline keeps a run's faults and appends each, as it ends, to a JSON
// lines file (when it has one). It is safe for concurrent use.
type Timeline struct {
	mu     sync.Mutex
	path   string
	events []Event
}

// NewTimeline returns a timeline written to path; "" keeps it in memory
// only. An existing file is replaced.
func NewTimeline(path string) (*Timeline, error) {
	if path != "" {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			return nil, fmt.Errorf("fault timeline: %w", err)
		}
	}
	return &Timeline{path: path}, nil
}

// Add records ev and appends its line to the file.
func (t *Timeline) Add(ev Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, ev)
	if t.path == "" {
		return nil
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("fault timeline: %w", err)
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("fault timeline: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fault timeline: %w", err)
	}
	return nil
}

// Events returns the faults recorded so far.
func (t *Timeline) Events() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.events)
}

// Path is the file the timeline is written to, "" for none.
func (t *Timeline) Path() string { return t.path }
