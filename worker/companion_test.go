package worker

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func build(rev, modified string, deps ...*debug.Module) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/storecheck/storecheck/cmd/storecheck",
		Main: debug.Module{Path: "github.com/storecheck/storecheck", Version: "v0.0.0-20261202165309-780b3a88f685"}, Deps: deps,
		Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}, {Key: "GOOS", Value: "linux"}}}
	if rev != "" {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.revision", Value: rev})
	}
	if modified != "" {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.modified", Value: modified})
	}
	return bi
}

// TestSameSource: a companion build starts the workers only when it comes
// from the running binary's commit, neither tree had changes, it was built
// with the same settings but its tags, and each of its modules is one the
// running binary holds at the same version (it has fewer: no container
// support).
func TestSameSource(t *testing.T) {
	sqlite := &debug.Module{Path: "modernc.org/sqlite", Version: "v1.40.0", Sum: "h1:a"}
	tc := &debug.Module{Path: "github.com/testcontainers/testcontainers-go", Version: "v0.40.0", Sum: "h1:b"}
	ours := build("abc", "false", sqlite, tc)
	other := func(f func(*debug.BuildInfo)) *debug.BuildInfo {
		bi := build("abc", "false", sqlite)
		f(bi)
		return bi
	}
	for _, tt := range []struct {
		name   string
		theirs *debug.BuildInfo
		want   bool
	}{
		{"same commit, fewer modules", build("abc", "false", sqlite), true},
		{"another commit", build("abd", "false", sqlite), false},
		{"a tree with changes", build("abc", "true", sqlite), false},
		{"no VCS stamp", build("", "", sqlite), false},
		{"a module at another version", build("abc", "false", &debug.Module{Path: "modernc.org/sqlite", Version: "v1.39.0", Sum: "h1:c"}), false},
		{"a module the running binary lacks", build("abc", "false", sqlite, &debug.Module{Path: "example.com/x", Version: "v1.0.0"}), false},
		{"another Go", other(func(bi *debug.BuildInfo) { bi.GoVersion = "go1.25.0" }), false},
		{"another module", other(func(bi *debug.BuildInfo) { bi.Main.Path = "example.com/other" }), false},
		{"the worker program, with its tag", other(func(bi *debug.BuildInfo) {
			bi.Path += "-worker"
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-tags", Value: "storecheck_nocontainers"})
		}), true},
		{"another target", other(func(bi *debug.BuildInfo) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "GOARCH", Value: "arm64"})
		}), false},
		{"without cgo", other(func(bi *debug.BuildInfo) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "CGO_ENABLED", Value: "0"})
		}), false},
	} {
		if got := sameSource(ours, tt.theirs); got != tt.want {
			t.Errorf("%s: sameSource = %v, want %v", tt.name, got, tt.want)
		}
	}
	if sameSource(build("abc", "true", sqlite, tc), build("abc", "true", sqlite)) {
		t.Error("two builds of a tree with changes taken for the same source")
	}
}

// TestCompanionNeedsAStampedBuild: no file beside the binary, or one with
// no VCS stamp (a test binary is never stamped), and the running binary
// starts its workers itself.
func TestCompanionNeedsAStampedBuild(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "storecheck")
	if _, ok := companion(exe); ok {
		t.Fatal("a companion found where there is none")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, Companion)); err != nil {
		t.Fatal(err)
	}
	if _, ok := companion(exe); ok {
		t.Error("an unstamped build taken as the companion")
	}
	if c, err := Self(); err != nil || c.Path != self {
		t.Errorf("Self in a test = %+v, %v; want the test binary %s", c, err, self)
	}
}
