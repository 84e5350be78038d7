package scenarios

import (
	"net/url"
	"strings"
	"testing"
)

// TestWithSnapshotFlags: a process cluster with no snapshot threshold gets
// one (beside flags it had); one that sets its own, a container cluster
// and other backends are left as given.
func TestWithSnapshotFlags(t *testing.T) {
	for _, c := range []struct {
		in        string
		wantFlags string // "" when the URL must come back unchanged
	}{
		{"rqlite+process:?nodes=3", snapshotFlags},
		{"rqlite+process:?nodes=3&flags=-raft-election-timeout=2s&rqlited=/opt/rq/rqlited", "-raft-election-timeout=2s," + snapshotFlags},
		{"rqlite+process:?nodes=3&flags=-raft-snap=100", ""},
		{"rqlite+container:?nodes=3", ""},
		{"sqlite:/tmp/x.db", ""},
	} {
		got, ok := withSnapshotFlags(c.in)
		if c.wantFlags == "" {
			if ok || got != c.in {
				t.Errorf("%s became %s", c.in, got)
			}
			continue
		}
		_, query, _ := strings.Cut(got, "?")
		q, err := url.ParseQuery(query)
		if !ok || err != nil || q.Get("flags") != c.wantFlags || q.Get("nodes") != "3" {
			t.Errorf("%s became %s (%v)", c.in, got, err)
		}
		if _, err := TargetFor(got); err != nil {
			t.Errorf("%s does not resolve: %v", got, err)
		}
	}
}
