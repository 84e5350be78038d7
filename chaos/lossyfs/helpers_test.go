package lossyfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// mountForTest mounts a lossy file system on a temporary directory and
// returns it with its mount point and backing directory; it skips the test
// when FUSE cannot work here, and checks at the end that nothing stays
// mounted.
func mountForTest(t *testing.T, opts Options) (*FS, string, string) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("NOT RUN: %v", err)
	}
	_, mp, backing := tempDirs(t)
	f, err := Mount(context.Background(), mp, backing, opts)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if m, err := Mounted(mp); err != nil || m {
			t.Errorf("after Close: mounted=%v err=%v", m, err)
		}
	})
	return f, mp, backing
}

// tempDirs makes a temporary directory with an empty mount point "mnt"
// and an empty backing directory "backing" in it.
func tempDirs(t testing.TB) (dir, mp, backing string) {
	t.Helper()
	dir = t.TempDir()
	mp, backing = filepath.Join(dir, "mnt"), filepath.Join(dir, "backing")
	for _, d := range []string{mp, backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, mp, backing
}

// cut cuts f and fails the test on an error.
func cut(t *testing.T, f *FS) CutReport {
	t.Helper()
	r, err := f.Cut(context.Background())
	if err != nil {
		t.Fatalf("cut: %v", err)
	}
	return r
}

// writeFile writes data to path (creating or emptying it), fsyncing it
// when sync is set.
func writeFile(t *testing.T, path string, data string, sync bool) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := fh.Sync(); err != nil {
			t.Fatalf("fsync %s: %v", path, err)
		}
	}
}

// fsyncPath fsyncs a file or directory.
func fsyncPath(t *testing.T, path string) {
	t.Helper()
	if err := syncPath(path); err != nil {
		t.Fatalf("fsync %s: %v", path, err)
	}
}

// readFile returns path's content, or "<absent>".
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// durableFile creates path with data and makes both durable.
func durableFile(t *testing.T, path, data string) {
	t.Helper()
	writeFile(t, path, data, true)
	fsyncPath(t, filepath.Dir(path))
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}
