package reports

import "testing"

// TestMadeNamesTheBuild: the "Made by" line says the storecheck version,
// its revision (and a tree with changes), the Go, and the worker-only
// build when the runs' workers started from it.
func TestMadeNamesTheBuild(t *testing.T) {
	s := &Summary{Storecheck: &Build{Version: "v1", Revision: "0123456789abcdef", Go: "go1.26.8"}, Host: &Host{OS: "linux", Arch: "amd64", CPUs: 2}}
	if got, want := made(s), "storecheck v1 (0123456789ab), go1.26.8, linux/amd64, 2 CPUs"; got != want {
		t.Errorf("made = %q, want %q", got, want)
	}
	s.Storecheck.Modified, s.Storecheck.Workers = true, "storecheck-worker"
	if got, want := made(s), "storecheck v1 (0123456789ab, modified), go1.26.8, workers from storecheck-worker, linux/amd64, 2 CPUs"; got != want {
		t.Errorf("made = %q, want %q", got, want)
	}
}
