package tmpfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestFolderIsAWritableTmpfs: the folder given is a tmpfs a file can be
// written in; without one, the reason says so.
func TestFolderIsAWritableTmpfs(t *testing.T) {
	dir, err := Folder()
	if err != nil {
		if !strings.HasPrefix(err.Error(), "no memory folder: ") {
			t.Fatalf("reason %q does not say there is no memory folder", err)
		}
		t.Skipf("NOT RUN: %v", err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || int64(st.Type) != tmpfsMagic {
		t.Fatalf("%s: file system type %#x (%v), want a tmpfs", dir, st.Type, err)
	}
	f, err := os.CreateTemp(dir, "storecheck-tmpfs-test-*")
	if err != nil {
		t.Fatalf("%s is not writable: %v", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
}

// TestMkdirTempRemovesOnlyStaleFolders: a folder left by a process that is
// gone is removed; this process's, a live process's and unrelated folders
// stay; the new folder carries this process's id.
func TestMkdirTempRemovesOnlyStaleFolders(t *testing.T) {
	parent := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mine := strconv.Itoa(os.Getpid())
	keep := []string{"x-" + mine + "-a", "x-1-init", "y-" + strconv.Itoa(gone.Process.Pid) + "-other", "x-notapid-b"}
	stale := "x-" + strconv.Itoa(gone.Process.Pid) + "-stale"
	for _, d := range append(keep, stale) {
		if err := os.Mkdir(filepath.Join(parent, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := MkdirTemp(parent, "x-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(dir), "x-"+mine+"-") {
		t.Errorf("new folder %s does not carry this process's id", dir)
	}
	if _, err := os.Stat(filepath.Join(parent, stale)); !os.IsNotExist(err) {
		t.Errorf("the folder of a process that is gone is still there (%v)", err)
	}
	for _, d := range keep {
		if _, err := os.Stat(filepath.Join(parent, d)); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
