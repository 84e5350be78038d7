package tmpfs

import (
	"os"
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
