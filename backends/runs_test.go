package backends

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storecheck/storecheck/model"
	"github.com/storecheck/storecheck/model/runstore"
)

func TestOpenRuns(t *testing.T) {
	dir := t.TempDir()
	for _, url := range []string{"runs+memory:", "runs+sqlite::memory:", "runs+sqlite:" + filepath.Join(dir, "r.db"),
		"runs+mutant:renew-expired", "runs+mutant:claim-keeps-token?path=" + filepath.Join(dir, "m.db")} {
		t.Run(url, func(t *testing.T) {
			ctx := context.Background()
			if err := Validate(url); err != nil {
				t.Fatal(err)
			}
			if !IsRunStore(url) {
				t.Fatal("not seen as a run store")
			}
			s, err := OpenRuns(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.CreateRun(ctx, runstore.NewRun{ID: "r", TenantID: "t", SessionID: "s"}); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(ctx, url, model.DefaultConfig()); err == nil || !strings.Contains(err.Error(), "not an execution store") {
				t.Fatalf("Open of a run-store URL: %v", err)
			}
		})
	}
	if _, err := OpenRuns(context.Background(), "memory:"); err == nil || !strings.Contains(err.Error(), "not a run store") {
		t.Fatalf("OpenRuns of an execution-store URL: %v", err)
	}
	if IsRunStore("memory:") || IsRunStore("nope:") {
		t.Fatal("an execution-store URL seen as a run store")
	}
}

func TestRunStoreFile(t *testing.T) {
	for url, want := range map[string]string{
		"runs+sqlite:/tmp/x.db":               "/tmp/x.db",
		"runs+sqlite::memory:":                "",
		"runs+memory:":                        "",
		"runs+mutant:renew-expired":           "",
		"runs+mutant:renew-expired?path=/a/b": "/a/b",
		"sqlite:/tmp/x.db":                    "",
	} {
		got, ok := RunStoreFile(url)
		if got != want || ok != (want != "") {
			t.Errorf("RunStoreFile(%q) = %q, %v; want %q", url, got, ok, want)
		}
	}
}
