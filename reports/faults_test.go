package reports

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

func TestReadFaults(t *testing.T) {
	faults, err := ReadFaults(filepath.Join("testdata", "fixture", "runs", "01-rqlite-concurrent", FaultsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{
		{Fault: "kill-leader", Target: "n2", StartNS: 300_000_000, EndNS: 500_000_000, Detail: "SIGKILL to the leader; restarted after 200 ms"},
		{Fault: "partition", Target: "n3", StartNS: 800_000_000, Detail: "n3 cut off from n1, n2; not healed"},
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
	want := []Fault{{Fault: "pause", Target: "n1", StartNS: 5, EndNS: 9, Detail: "SIGSTOP <then> SIGCONT"}, {Fault: "partition", StartNS: 12}}
	if err := WriteFaults(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFaults(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if err := WriteFaults(path, []Fault{{StartNS: 1}}); err == nil {
		t.Error("a fault without a name was written")
	}
}
