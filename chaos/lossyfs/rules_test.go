package lossyfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Each rule of the contract, one at a time: what a cut keeps and what it
// discards. Reads through the mount see the latest state before the cut.

func TestUnsyncedWriteVanishesAtCut(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	p := filepath.Join(mp, "f")
	durableFile(t, p, "durable")
	writeFile(t, p, "unsynced, longer than before", false)
	expect(t, "read before cut", readFile(t, p), "unsynced, longer than before")
	expect(t, "backing before cut", readFile(t, filepath.Join(backing, "f")), "durable")
	r := cut(t, f)
	expect(t, "read after cut", readFile(t, p), "durable")
	if r.Files != 1 {
		t.Errorf("cut report: %+v, want 1 file with lost writes", r)
	}
}

func TestSyncedWriteStays(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	p := filepath.Join(mp, "f")
	durableFile(t, p, "first")
	writeFile(t, p, "second", true)
	expect(t, "backing before cut", readFile(t, filepath.Join(backing, "f")), "second")
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "second")
}

func TestFdatasyncMakesContentDurable(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	p := filepath.Join(mp, "f")
	durableFile(t, p, "first")
	fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("+appended"); err != nil {
		t.Fatal(err)
	}
	if err := fdatasync(fh); err != nil {
		t.Fatalf("fdatasync: %v", err)
	}
	fh.Close()
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "first+appended")
	if got := f.Stats().Syncs[Fdatasync]; got != 1 {
		t.Errorf("fdatasync count = %d, want 1", got)
	}
}

func TestUnsyncedTruncateReverts(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	p := filepath.Join(mp, "f")
	durableFile(t, p, "0123456789")
	if err := os.Truncate(p, 3); err != nil {
		t.Fatal(err)
	}
	expect(t, "read before cut", readFile(t, p), "012")
	// Growing again shows zeros, not the old bytes.
	if err := os.Truncate(p, 5); err != nil {
		t.Fatal(err)
	}
	expect(t, "read before cut", readFile(t, p), "012\x00\x00")
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "0123456789")
}

func TestSyncedTruncateStays(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	p := filepath.Join(mp, "f")
	durableFile(t, p, "0123456789")
	if err := os.Truncate(p, 3); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, p)
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "012")
}

func TestUnsyncedCreateDisappears(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	p := filepath.Join(mp, "new")
	writeFile(t, p, "data", false)
	expect(t, "read before cut", readFile(t, p), "data")
	expect(t, "backing before cut", readFile(t, filepath.Join(backing, "new")), "<absent>")
	r := cut(t, f)
	expect(t, "read after cut", readFile(t, p), "<absent>")
	if r.Inodes != 1 || r.EntryChanges != 1 {
		t.Errorf("cut report: %+v, want 1 inode and 1 entry change discarded", r)
	}
}

// A file created, written and fsynced whose directory was not fsynced is
// lost with its name: nothing durable names it.
func TestFileSyncedButDirectoryNotIsLost(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	p := filepath.Join(mp, "new")
	writeFile(t, p, "synced", true)
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "<absent>")
}

// A directory fsync after the file's fsync names the content that the
// file's fsync made durable, not what was written after it.
func TestDirectorySyncNamesTheSyncedContent(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	p := filepath.Join(mp, "new")
	writeFile(t, p, "synced", true)
	fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("+unsynced"); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	fsyncPath(t, mp)
	expect(t, "backing", readFile(t, filepath.Join(backing, "new")), "synced")
	expect(t, "read before cut", readFile(t, p), "synced+unsynced")
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "synced")
}

func TestRenameUnsyncedRevertsSyncedStays(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	a, b := filepath.Join(mp, "a"), filepath.Join(mp, "b")
	durableFile(t, a, "A")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	expect(t, "b before cut", readFile(t, b), "A")
	cut(t, f)
	expect(t, "a after cut", readFile(t, a), "A")
	expect(t, "b after cut", readFile(t, b), "<absent>")

	// The atomic-replace idiom: write a temporary file, fsync it, rename
	// it over the old one, fsync the directory.
	tmp := filepath.Join(mp, "a.tmp")
	writeFile(t, tmp, "A2", true)
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, mp)
	cut(t, f)
	expect(t, "a after second cut", readFile(t, a), "A2")
	expect(t, "a.tmp after second cut", readFile(t, tmp), "<absent>")
}

func TestUnlinkUnsyncedRevertsSyncedStays(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	p := filepath.Join(mp, "f")
	durableFile(t, p, "F")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	expect(t, "read before cut", readFile(t, p), "<absent>")
	expect(t, "backing before cut", readFile(t, filepath.Join(backing, "f")), "F")
	cut(t, f)
	expect(t, "read after cut", readFile(t, p), "F")

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, mp)
	cut(t, f)
	expect(t, "read after second cut", readFile(t, p), "<absent>")
}

// An fsync of a directory commits the journal up to its last change, and
// with it the earlier changes to other directories: here the mkdir of the
// directory itself.
func TestDirectorySyncCommitsEarlierChanges(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "x"), "X", true)
	writeFile(t, filepath.Join(mp, "later"), "L", true)
	fsyncPath(t, dir)
	expect(t, "backing d/x", readFile(t, filepath.Join(backing, "d", "x")), "X")
	cut(t, f)
	expect(t, "d/x after cut", readFile(t, filepath.Join(dir, "x")), "X")
	expect(t, "later after cut", readFile(t, filepath.Join(mp, "later")), "<absent>")
}

func TestDirectoriesLinksAndSymlinks(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	dir := filepath.Join(mp, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	durableFile(t, filepath.Join(dir, "x"), "X")
	if err := os.Link(filepath.Join(dir, "x"), filepath.Join(mp, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/x", filepath.Join(mp, "soft")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(mp, "e")); err != nil {
		t.Fatal(err)
	}
	expect(t, "hard", readFile(t, filepath.Join(mp, "hard")), "X")
	fsyncPath(t, mp)
	cut(t, f)
	expect(t, "e/x", readFile(t, filepath.Join(mp, "e", "x")), "X")
	expect(t, "hard", readFile(t, filepath.Join(mp, "hard")), "X")
	if target, err := os.Readlink(filepath.Join(mp, "soft")); err != nil || target != "d/x" {
		t.Errorf("soft -> %q, %v", target, err)
	}
	// The hard link shares the content: a synced write through one name
	// shows through the other after a cut.
	writeFile(t, filepath.Join(mp, "hard"), "Y", true)
	cut(t, f)
	expect(t, "e/x after write through hard", readFile(t, filepath.Join(mp, "e", "x")), "Y")
	if err := os.Remove(filepath.Join(mp, "e")); err == nil {
		t.Error("rmdir of a non-empty directory worked")
	}
	if err := os.Remove(filepath.Join(mp, "e", "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(mp, "e")); err != nil {
		t.Errorf("rmdir of an emptied directory: %v", err)
	}
}

func TestDescriptorOfARemovedFileFailsAfterCut(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	fh, err := os.Create(filepath.Join(mp, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	cut(t, f)
	if _, err := fh.WriteString("x"); err == nil {
		t.Error("write to a file removed by a cut worked")
	}
}

// The synced content of a file that has no durable name yet is kept in
// memory across several fsyncs, each adding only its changed pages, until
// a directory fsync writes it out.
func TestUnnamedFileKeepsItsLastSyncedContent(t *testing.T) {
	f, mp, backing := mountForTest(t, Options{})
	p := filepath.Join(mp, "new")
	a, b := strings.Repeat("a", pageSize), strings.Repeat("b", pageSize)
	writeFile(t, p, a+a+a, true)
	fh, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt([]byte(b), pageSize); err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(2*pageSize + 10); err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	synced := a + b + a[:10]
	if _, err := fh.WriteAt([]byte("unsynced"), 0); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, mp)
	expect(t, "backing", readFile(t, filepath.Join(backing, "new")), synced)
	cut(t, f)
	expect(t, "after cut", readFile(t, p), synced)
}

func TestSyncLogIsBounded(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{SyncLogSize: 3})
	p := filepath.Join(mp, "f")
	for i := range 5 {
		writeFile(t, p, strings.Repeat("x", i+1), true)
	}
	s := f.Stats()
	if len(s.SyncLog) != 3 || s.SyncLogDropped != 2 {
		t.Fatalf("sync log of %d calls, %d dropped; want 3 and 2", len(s.SyncLog), s.SyncLogDropped)
	}
	for i, c := range s.SyncLog {
		if c.Seq != uint64(i+3) || c.Kind != Fsync || c.Path != "f" {
			t.Errorf("sync log[%d] = %+v, want seq %d fsync of f", i, c, i+3)
		}
	}
	if got := s.Paths["f"].Fsync; got != 5 {
		t.Errorf("fsync count of f = %d, want 5", got)
	}
}

// Past MaxJournal entry changes, the oldest half is committed without a
// directory fsync, as a file system commits its journal on a timer.
func TestFullJournalCommitsItsOldestHalf(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{MaxJournal: 4})
	for i := range 5 {
		writeFile(t, filepath.Join(mp, strconv.Itoa(i)), "x", false)
	}
	if s := f.Stats(); s.AutoCommitted != 2 || s.EntryChanges != 5 {
		t.Fatalf("auto-committed %d of %d entry changes, want 2 of 5", s.AutoCommitted, s.EntryChanges)
	}
	if changes, _ := f.Unsynced(); changes != 3 {
		t.Errorf("%d entry changes wait, want 3", changes)
	}
	cut(t, f)
	for i := range 5 {
		want := "<absent>"
		if i < 2 {
			want = "" // named, but its content was never synced
		}
		expect(t, "file "+strconv.Itoa(i), readFile(t, filepath.Join(mp, strconv.Itoa(i))), want)
	}
}
