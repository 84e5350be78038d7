package lossyfs

import (
	"maps"
	"slices"
	"time"
)

// SyncKind is the kind of a sync call.
type SyncKind string

// The sync calls, as the file system receives them. The kernel sends
// fsync(2) and fdatasync(2) of a directory as one request with the same
// flag as for a file.
const (
	Fsync        SyncKind = "fsync"
	Fdatasync    SyncKind = "fdatasync"
	DirFsync     SyncKind = "fsync-dir"
	DirFdatasync SyncKind = "fdatasync-dir"
)

// SyncCall is one sync call the file system received.
type SyncCall struct {
	// Seq numbers the sync calls from 1.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Path is the file's path relative to the mount when it was synced.
	Path string   `json:"path"`
	Kind SyncKind `json:"kind"`
	// Bytes is how many bytes of changed pages a file sync made durable
	// (whole pages); Entries how many journaled entry changes a directory
	// sync committed.
	Bytes   int64  `json:"bytes,omitempty"`
	Entries int    `json:"entries,omitempty"`
	Err     string `json:"err,omitempty"`
}

// PathCounters counts what happened to one path.
type PathCounters struct {
	Writes       int64 `json:"writes"`
	BytesWritten int64 `json:"bytes_written"`
	Fsync        int64 `json:"fsync"`
	Fdatasync    int64 `json:"fdatasync"`
	DirFsync     int64 `json:"fsync_dir"`
	DirFdatasync int64 `json:"fdatasync_dir"`
}

// Stats is what the file system counted since it was mounted.
type Stats struct {
	Writes       int64 `json:"writes"`
	BytesWritten int64 `json:"bytes_written"`
	// Syncs counts the sync calls of each kind.
	Syncs map[SyncKind]int64 `json:"syncs"`
	// Paths counts per path (as it was named when the thing happened); at
	// most maxTrackedPaths of them, the rest under OtherPaths.
	Paths map[string]PathCounters `json:"paths"`
	// EntryChanges counts the entry changes journaled; AutoCommitted
	// those committed because the journal was full, not by an fsync.
	EntryChanges  int64 `json:"entry_changes"`
	AutoCommitted int64 `json:"auto_committed"`
	Cuts          int   `json:"cuts"`
	// SyncLog holds the last sync calls, oldest first; SyncLogDropped
	// counts the older ones it no longer holds.
	SyncLog        []SyncCall `json:"sync_log"`
	SyncLogDropped uint64     `json:"sync_log_dropped"`
	// BackingErrors holds the last errors of the backing directory.
	BackingErrors []string `json:"backing_errors,omitempty"`
}

// OtherPaths is the key of Stats.Paths that counts the paths past the
// first maxTrackedPaths.
const OtherPaths = "(other paths)"

// maxTrackedPaths bounds Stats.Paths; maxBackingErrors Stats.BackingErrors.
const (
	maxTrackedPaths  = 4096
	maxBackingErrors = 16
)

// recorder keeps the counters; tree.mu guards it. The sync log is a ring:
// ring[next] is the oldest call once it is full.
type recorder struct {
	stats   Stats
	logSize int
	seq     uint64
	ring    []SyncCall
	next    int
}

func newRecorder(logSize int) *recorder {
	return &recorder{
		stats:   Stats{Syncs: map[SyncKind]int64{}, Paths: map[string]PathCounters{}},
		logSize: logSize,
	}
}

// path returns the counters of path, or those of OtherPaths when too many
// paths are counted already.
func (r *recorder) path(path string) (string, PathCounters) {
	if c, ok := r.stats.Paths[path]; ok || len(r.stats.Paths) < maxTrackedPaths {
		return path, c
	}
	return OtherPaths, r.stats.Paths[OtherPaths]
}

func (r *recorder) wrote(path string, n int) {
	r.stats.Writes++
	r.stats.BytesWritten += int64(n)
	key, c := r.path(path)
	c.Writes++
	c.BytesWritten += int64(n)
	r.stats.Paths[key] = c
}

func (r *recorder) synced(call SyncCall) {
	r.seq++
	call.Seq = r.seq
	call.Time = time.Now()
	r.stats.Syncs[call.Kind]++
	key, c := r.path(call.Path)
	switch call.Kind {
	case Fsync:
		c.Fsync++
	case Fdatasync:
		c.Fdatasync++
	case DirFsync:
		c.DirFsync++
	case DirFdatasync:
		c.DirFdatasync++
	}
	r.stats.Paths[key] = c
	switch {
	case r.logSize <= 0:
		r.stats.SyncLogDropped++
	case len(r.ring) < r.logSize:
		r.ring = append(r.ring, call)
	default:
		r.ring[r.next] = call
		r.next = (r.next + 1) % r.logSize
		r.stats.SyncLogDropped++
	}
}

func (r *recorder) entryChange()        { r.stats.EntryChanges++ }
func (r *recorder) autoCommitted(n int) { r.stats.AutoCommitted += int64(n) }
func (r *recorder) cut()                { r.stats.Cuts++ }

func (r *recorder) backingError(msg string) {
	if len(r.stats.BackingErrors) >= maxBackingErrors {
		r.stats.BackingErrors = slices.Delete(r.stats.BackingErrors, 0, 1)
	}
	r.stats.BackingErrors = append(r.stats.BackingErrors, msg)
}

// snapshot returns a copy that shares nothing with the recorder.
func (r *recorder) snapshot() Stats {
	s := r.stats
	s.Syncs = maps.Clone(r.stats.Syncs)
	s.Paths = maps.Clone(r.stats.Paths)
	s.SyncLog = append(slices.Clone(r.ring[r.next:]), r.ring[:r.next]...)
	s.BackingErrors = slices.Clone(r.stats.BackingErrors)
	return s
}
