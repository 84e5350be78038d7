package evidence

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadFaultsMissingFile(t *testing.T) {
	faults, err := ReadFaults(filepath.Join(t.TempDir(), FaultsFile))
	if err != nil || faults != nil {
		t.Fatalf("missing file: %v, %v; want no faults and no error", faults, err)
	}
}

// TestReadOldFaultLogs: logs written before this package — by the reports'
// fixtures (spaces, end_ns 0), by chaos.Timeline (error, metrics) and by
// the replica-lag sweep — still read.
func TestReadOldFaultLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), FaultsFile)
	old := `{"fault": "kill-leader", "target": "n2", "start_ns": 300000000, "end_ns": 500000000, "detail": "SIGKILL to the leader; restarted after 200 ms"}
{"fault": "partition", "target": "n3", "start_ns": 800000000, "end_ns": 0, "detail": "n3 cut off from n1, n2; not healed"}
{"fault":"kill-leader","target":"n1","start_ns":5,"end_ns":9,"detail":"SIGKILL","error":"heal: n1 did not start","metrics":{"new_leader_ms":812.5}}

{"fault":"stall-replica","target":"r1","start_ns":10,"end_ns":0,"detail":"heal failed: boom"}
`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	faults, err := ReadFaults(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{
		{Fault: "kill-leader", Target: "n2", StartNS: 300_000_000, EndNS: 500_000_000, Detail: "SIGKILL to the leader; restarted after 200 ms"},
		{Fault: "partition", Target: "n3", StartNS: 800_000_000, Detail: "n3 cut off from n1, n2; not healed"},
		{Fault: "kill-leader", Target: "n1", StartNS: 5, EndNS: 9, Detail: "SIGKILL", Error: "heal: n1 did not start", Metrics: map[string]float64{"new_leader_ms": 812.5}},
		{Fault: "stall-replica", Target: "r1", StartNS: 10, Detail: "heal failed: boom"},
	}
	if !reflect.DeepEqual(faults, want) {
		t.Fatalf("got %+v\nwant %+v", faults, want)
	}
	if !faults[0].Healed() || faults[1].Healed() {
		t.Error("Healed: the first fault healed, the second did not")
	}
	if got := faults[1].Until(2e9); got != 2e9 {
		t.Errorf("an unhealed fault lasts to the run's end: Until = %d", got)
	}
	if w := faults[0].Window(); w.Name != "kill-leader n2" || w.Start != 300_000_000 || w.End != 500_000_000 || w.Details == "" {
		t.Errorf("window %+v", w)
	}
}

func TestReadFaultsMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"not json", `{"fault":"kill","start_ns":1}` + "\n\nnope\n", "line 3"},
		{"no name", `{"start_ns":1}`, `line 1: no "fault" name`},
		{"end before start", `{"fault":"kill","start_ns":10,"end_ns":5}`, "line 1: end_ns 5 before start_ns 10"},
		{"negative start", `{"fault":"kill","start_ns":-1}`, "line 1: negative start_ns"},
		{"two objects", `{"fault":"a","start_ns":1} {"fault":"b","start_ns":2}`, "line 1"},
		{"wrong type", `{"fault":"a","start_ns":"soon"}`, "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FaultsFile)
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFaults(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name the file and %q", err, tc.want)
			}
		})
	}
}

func TestReadFaultsUnknownFieldsAllowed(t *testing.T) {
	faults, err := DecodeFaults(strings.NewReader(`{"fault":"pause","start_ns":5,"end_ns":9,"signal":"SIGSTOP"}`))
	if err != nil || len(faults) != 1 || faults[0].Fault != "pause" {
		t.Fatalf("got %+v, %v", faults, err)
	}
}

func TestWriteFaultsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), FaultsFile)
	want := []Fault{
		{Fault: "pause", Target: "n1", StartNS: 5, EndNS: 9, Detail: "SIGSTOP <then> SIGCONT"},
		{Fault: "partition", StartNS: 12, Error: "rejoin: no iptables", Metrics: map[string]float64{"new_leader_ms": 3}},
	}
	if err := WriteFaults(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFaults(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "<then>") {
		t.Errorf("HTML escaped in the log:\n%s", b)
	}
	if err := WriteFaults(path, []Fault{{StartNS: 1}}); err == nil {
		t.Error("a fault without a name was written")
	}
}

// TestTimeline: the log is there, empty, from the start; each fault added
// is in the file at once; a fault the file refuses is said so and the rest
// stay readable.
func TestTimeline(t *testing.T) {
	f := At(t.TempDir())
	if err := os.WriteFile(f.Path(FaultsFile), []byte("an earlier run's log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl, err := f.Timeline()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.ReadFaults(); err != nil || len(got) != 0 || tl.Path() != f.Path(FaultsFile) {
		t.Fatalf("a new timeline's log: %v, %v", got, err)
	}
	a := Fault{Fault: "kill-leader", Target: "n1", StartNS: 1, EndNS: 2, Metrics: map[string]float64{"new_leader_ms": 1.5}}
	if err := tl.Add(a); err != nil {
		t.Fatal(err)
	}
	if err := tl.Add(Fault{StartNS: 3}); err == nil {
		t.Error("a fault without a name was accepted by the file")
	}
	b := Fault{Fault: "isolate", Target: "n2", StartNS: 4, Error: "rejoin failed"}
	if err := tl.Add(b); err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadFaults()
	if err != nil || !reflect.DeepEqual(got, []Fault{a, b}) {
		t.Errorf("log %+v, %v", got, err)
	}
	if n := len(tl.Faults()); n != 3 {
		t.Errorf("%d faults in memory, want all 3", n)
	}
	noTemporaries(t, f.Dir())
}
