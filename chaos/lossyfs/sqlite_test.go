package lossyfs

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A real SQLite database (modernc.org/sqlite, WAL) in the mount, written
// by a worker process that is SIGKILLed before the cut, as the harness's
// crash scenarios do; a fresh connection reads it after the cut. With
// synchronous=FULL every commit survives; commits made with
// synchronous=OFF after the last synced one are lost.

const sqliteRows = 40

// survivors commits rows in a worker under the given phases (in WAL
// mode), kills it, cuts, and returns how many rows the database has then,
// after checking its integrity. It logs the sync calls the file system
// saw.
func survivors(t *testing.T, opts Options, phases ...phase) int {
	t.Helper()
	_, rows := survivorsIn(t, opts, "", phases...)
	return rows
}

// survivorsIn is survivors in the given journal mode; it also returns the
// file system, for its counters.
func survivorsIn(t *testing.T, opts Options, journalMode string, phases ...phase) (*FS, int) {
	t.Helper()
	f, mp, _ := mountForTest(t, opts)
	path := filepath.Join(mp, "db.sqlite")
	w := startWorker(t, workerConfig{Job: "sqlite", Path: path, Phases: phases, JournalMode: journalMode})
	w.kill()
	report := cut(t, f)
	t.Logf("cut: %+v", report)
	logSyncs(t, f)
	return f, countRows(t, path, journalMode)
}

// countRows checks the database's integrity and counts the rows of t, in
// a new process, as the harness does after a cut. (Not in this process:
// SQLite maps the -shm file, and this process serves the mount; see the
// package documentation.)
func countRows(t *testing.T, path, journalMode string) int {
	t.Helper()
	w := startWorker(t, workerConfig{Job: "check", Path: path, JournalMode: journalMode})
	w.kill()
	var c checked
	for _, line := range w.lines {
		if rest, ok := strings.CutPrefix(line, "checked "); ok {
			if err := json.Unmarshal([]byte(rest), &c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c.Integrity != "ok" {
		t.Fatalf("integrity_check: %q (%v)", c.Integrity, w.lines)
	}
	if c.Rows > 0 && c.MaxID != c.Rows-1 {
		t.Errorf("rows are not a prefix of the commits: %d rows, last id %d", c.Rows, c.MaxID)
	}
	return c.Rows
}

func logSyncs(t *testing.T, f *FS) {
	t.Helper()
	s := f.Stats()
	t.Logf("syncs: %v, entry changes %d", s.Syncs, s.EntryChanges)
	for path, c := range s.Paths {
		t.Logf("  %-20s %+v", path, c)
	}
	for i, c := range s.SyncLog {
		if i == 12 {
			t.Logf("  ... %d more", len(s.SyncLog)-i)
			break
		}
		t.Logf("  #%d %s %s bytes=%d entries=%d", c.Seq, c.Kind, c.Path, c.Bytes, c.Entries)
	}
}

// With FULL, SQLite fsyncs the WAL at every commit, and the directory
// once, after it created the WAL (and, before, the rollback journal of the
// switch to WAL): the names and the commits are durable.
func TestSQLiteFullKeepsEveryCommit(t *testing.T) {
	f, got := survivorsIn(t, Options{}, "", phase{"FULL", sqliteRows})
	if got != sqliteRows {
		t.Errorf("after the cut: %d rows, want all %d", got, sqliteRows)
	}
	s := f.Stats()
	if n := s.Paths["db.sqlite-wal"].Fsync + s.Paths["db.sqlite-wal"].Fdatasync; n < sqliteRows {
		t.Errorf("%d syncs of the WAL for %d commits", n, sqliteRows)
	}
	if s.Paths["."].DirFsync+s.Paths["."].DirFdatasync == 0 {
		t.Error("no directory sync")
	}
}

// With NORMAL, SQLite syncs the WAL only at checkpoints: commits after the
// last sync are lost, as with OFF.
func TestSQLiteNormalLosesCommitsAfterTheLastSync(t *testing.T) {
	const synced = 10
	got := survivors(t, Options{}, phase{"FULL", synced}, phase{"NORMAL", sqliteRows - synced})
	if got != synced {
		t.Errorf("after the cut: %d rows, want the %d committed with FULL", got, synced)
	}
}

// In rollback journal mode DELETE, a commit ends by unlinking the journal;
// FULL does not fsync the directory after that, so at the cut the last
// journal comes back, hot, and SQLite rolls the last commit back. EXTRA
// fsyncs the directory after the unlink and keeps it. (SQLite documents
// exactly this difference between FULL and EXTRA.)
func TestSQLiteDeleteJournalNeedsExtraForTheLastCommit(t *testing.T) {
	_, full := survivorsIn(t, Options{}, "DELETE", phase{"FULL", sqliteRows})
	if full != sqliteRows-1 {
		t.Errorf("DELETE+FULL: %d rows after the cut, want %d (the last commit rolled back)", full, sqliteRows-1)
	}
	_, extra := survivorsIn(t, Options{}, "DELETE", phase{"EXTRA", sqliteRows})
	if extra != sqliteRows {
		t.Errorf("DELETE+EXTRA: %d rows after the cut, want all %d", extra, sqliteRows)
	}
}

// The first rows are committed with FULL, the rest with OFF: the WAL
// frames of the OFF commits were never synced, so exactly the FULL ones
// survive.
func TestSQLiteOffLosesCommitsAfterTheLastSync(t *testing.T) {
	const synced = 10
	got := survivors(t, Options{}, phase{"FULL", synced}, phase{"OFF", sqliteRows - synced})
	if got != synced {
		t.Errorf("after the cut: %d rows, want the %d committed with FULL", got, synced)
	}
}

// A database written with OFF from the start keeps nothing of its
// commits. (Its file survives, empty: the DSN switches to WAL before it
// sets synchronous=OFF, and that switch runs under the default FULL,
// which syncs a rollback journal, the database and the directory.)
func TestSQLiteOffFromTheStartLosesEverything(t *testing.T) {
	got := survivors(t, Options{}, phase{"OFF", sqliteRows})
	if got != 0 {
		t.Errorf("after the cut: %d rows, want none", got)
	}
}

// With torn cuts, part of the unsynced WAL frames reach the disk: SQLite's
// WAL checksums keep a prefix of the commits, and the database is intact.
func TestSQLiteTornCutKeepsAPrefix(t *testing.T) {
	const synced = 10
	tornThrough := false
	for seed := uint64(1); seed <= 3; seed++ {
		got := survivors(t, Options{Torn: true, Seed: seed}, phase{"FULL", synced}, phase{"OFF", sqliteRows - synced})
		if got < synced || got > sqliteRows {
			t.Errorf("seed %d: %d rows, want between %d and %d", seed, got, synced, sqliteRows)
		}
		tornThrough = tornThrough || got > synced
		t.Logf("seed %d: %d rows survive", seed, got)
	}
	if !tornThrough {
		t.Errorf("no seed let an unsynced commit through")
	}
}

// A worker SIGKILLed in the middle of committing, with its files open and
// writes in flight, does not wedge the file system: after the cut a new
// process finds every commit the worker acknowledged (FULL), and the
// database intact.
func TestSQLiteKilledMidCommitKeepsEveryAcknowledgedCommit(t *testing.T) {
	f, mp, _ := mountForTest(t, Options{})
	path := filepath.Join(mp, "db.sqlite")
	w := launchWorker(t, workerConfig{Job: "sqlite", Path: path, Phases: []phase{{"FULL", 100000}}})
	acked := 0
	for w.out.Scan() {
		if strings.HasPrefix(w.out.Text(), "committed ") {
			acked++
		}
		if acked == 20 {
			break
		}
	}
	w.kill()
	for w.out.Scan() { // what it wrote before it died
		if strings.HasPrefix(w.out.Text(), "committed ") {
			acked++
		}
	}
	report := cut(t, f)
	rows := countRows(t, path, "")
	t.Logf("%d commits acknowledged, %d rows after the cut (%+v)", acked, rows, report)
	if acked < 20 || rows < acked {
		t.Errorf("%d rows after the cut, want at least the %d acknowledged", rows, acked)
	}
}
