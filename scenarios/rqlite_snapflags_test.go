package scenarios

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
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

// TestSnapshotOftenOpensTheFlags: a scenario given snapshotOften opens the
// URL with the snapshot threshold, through a test's Opener too (until
// 2026-12-03 the tests' Opener opened the URL the test gave, so
// TestLongReads ran its servers without the threshold its reason named).
func TestSnapshotOftenOpensTheFlags(t *testing.T) {
	tg := mustTarget(t, "rqlite+process:?nodes=3&rqlited=/opt/rq/rqlited")
	var opened string
	tg.Opener = func(_ context.Context, url string, _ model.Config) (model.Store, error) {
		opened = url
		return nil, errors.New("not opened in this test")
	}
	run := snapshotOften(func(ctx context.Context, t Target, _ Params) Result {
		_, _ = t.Open(ctx, model.DefaultConfig())
		return Result{}
	})
	res := run(context.Background(), tg, Params{})
	if !strings.Contains(opened, url.QueryEscape(snapshotFlags)) && !strings.Contains(opened, snapshotFlags) {
		t.Errorf("opened %q; want the URL with %s", opened, snapshotFlags)
	}
	if !strings.Contains(res.Reason, "were given "+snapshotFlags) {
		t.Errorf("reason %q", res.Reason)
	}
}
