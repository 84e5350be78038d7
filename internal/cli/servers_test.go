package cli

import (
	"strings"
	"testing"
)

func TestServerFlagsGoIntoURLs(t *testing.T) {
	s := serverFlags{rqlited: "/opt/rq/rqlited", rqliteImage: "build", sqld: "/opt/sqld"}
	got := s.apply([]string{
		"rqlite+process:?nodes=3",
		"rqlite+container:",
		"rqlite+process:?rqlited=/mine",
		"libsql+replica:/tmp/r.db?sync_interval=1s",
		"sqlite:/tmp/x.db",
	})
	want := []string{
		"rqlite+process:?nodes=3&rqlited=/opt/rq/rqlited",
		"rqlite+container:?rqlited=/opt/rq/rqlited&image=build",
		"rqlite+process:?rqlited=/mine",
		"libsql+replica:/tmp/r.db?sync_interval=1s&sqld=/opt/sqld",
		"sqlite:/tmp/x.db",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestServerFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "--rqlited", "/nonexistent/rqlited", "--backend", "rqlite+process:?nodes=3", "--out", dir},
		{"qualify", "--sqld", dir, "--out", dir},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.Contains(stderr, "--") {
			t.Errorf("%v: want exit 2 and one line, got %d: %s", args, code, stderr)
		}
	}
}
