// Package lossyfs is a FUSE file system that loses what was not synced, to
// simulate a power loss under a process that uses it (in the manner of
// Jepsen's LazyFS).
//
// # Contract
//
// The caller creates an empty directory and mounts a file system on it with
// Mount, naming a backing directory. Through the mount, processes (this one
// or others) see the backing directory's files and change them with the
// usual POSIX visibility: a read sees every earlier write, a lookup every
// earlier create, unlink or rename, whoever made it. What reaches the backing
// directory is only what was made durable:
//
//   - File contents and size (write, truncate) become durable at fsync or
//     fdatasync of that file. Both are treated alike: fdatasync makes the
//     size durable too, as it must when the size changed.
//   - Directory entries (create, mkdir, symlink, link, unlink, rmdir,
//     rename) become durable at fsync of a directory they changed. They are
//     journaled in the order they happened, and an fsync of directory D
//     commits the journal up to and including the last change that touched D
//     (as the parent of either name of a rename): what reaches the backing
//     directory is always a state the tree went through, never a mix, and
//     earlier changes to other directories are committed with it. This
//     keeps less than ext4 does in practice (its journal commits every
//     earlier entry change at any fsync) and more than POSIX promises
//     (nothing of other directories).
//   - A file that was created and fsynced, but whose directory was not
//     fsynced after the create, is lost at a cut, with its name: its
//     contents were durable but nothing durable names them. POSIX allows
//     this; it is the case that SQLite's directory fsync after creating a
//     journal or WAL file guards against. (ext4 with its journal usually
//     keeps such a file; this file system does not.) Its synced contents are
//     kept in memory until a directory fsync gives it a name in the backing
//     directory, and written there then.
//   - Attributes other than the size (mode, owner, times) are not part of
//     the model: mode and owner changes go to the backing file at once when
//     it has a name there; times live in memory only.
//
// Cut (a power cut) discards every change that was not made durable: after
// it the mount shows exactly the backing directory. Processes should be
// stopped or killed before a cut, as a power loss would: a file descriptor
// opened before a cut on a file that the cut removed fails with EIO
// afterwards; one on a file that survived sees the durable contents. With
// Options.Torn, a cut first lets part of the unsynced data through, at page
// (4096 byte) granularity, drawn from Options.Seed: each unsynced page
// within the durable size independently, and a prefix of the pages that
// extend the file (as an append reaches disk); entry changes are never torn.
//
// # Design
//
// The backing directory is the durable state, and this process holds the
// rest in memory (model.go): a tree of inodes, each directory with its
// visible entries and its durable entries (those in the backing directory),
// each file, once read or written, with its whole visible content and the
// set of pages changed since its last sync. Directories are read from the
// backing directory when first looked into. Entry changes update the visible
// tree at once and are appended to a journal (journal.go); a directory fsync
// replays a prefix of the journal onto the backing directory and the durable
// tree, then fsyncs the backing directories it changed. A file fsync writes
// the changed pages and the size to the file's backing name and fsyncs it
// (content.go); a file with no backing name yet keeps its synced content in
// memory until it gets one. Cut (cut.go) drops the journal, the in-memory
// contents and every inode the durable tree does not reach, sets each
// directory's visible entries to its durable ones, and tells the kernel to
// drop its cached pages of every file.
//
// Memory grows with the files opened (each is held whole once read or
// written) and with the journal, which a workload that never fsyncs a
// directory would grow without end: past Options.MaxJournal entries the
// oldest are committed as if a directory had been fsynced (as a file system
// commits its journal on a timer), and Stats counts them.
//
// # Kernel caches
//
// The mount uses zero entry and attribute timeouts, so every path walk and
// stat reaches this file system, and no direct I/O, so that shared mmap
// works (SQLite maps the -shm file of a WAL database). Without the writeback
// cache the kernel sends every write through at once; its page cache is
// dropped at every open and, for every file, at a cut (before the cut, so
// that pages dirtied through mmap reach this file system first, and after,
// so that none of the discarded contents stays cached). POSIX advisory
// locks (fcntl F_SETLK, which SQLite uses) are not implemented here: the
// kernel then keeps them itself, and they exclude each other across the
// processes of this machine as on a local file system.
//
// # The serving process must not map files of its own mount
//
// The file system is served by goroutines of the process that mounted it.
// A page fault on a mapping of a file in the mount blocks a thread in the
// kernel until the server answers; Go's garbage collector cannot stop that
// thread, and stops the goroutines that would answer: the process hangs,
// and a thread of it stays stuck even after it is killed, until
// ForceUnmount aborts the FUSE connection. Read and write system calls are
// safe, mappings are not. SQLite in WAL mode maps the -shm file, so
// modernc.org/sqlite must open a WAL database of the mount in another
// process (a worker), or in this one only with PRAGMA
// locking_mode=EXCLUSIVE set before journal_mode=WAL, which keeps the WAL
// index in heap memory instead.
//
// # Observability
//
// Stats counts writes, bytes written, and fsync and fdatasync calls per path
// and for directories, and keeps the last Options.SyncLogSize sync calls
// (path, kind, time, what each made durable).
//
// # What SQLite does (as the tests observe it)
//
// modernc.org/sqlite and go-libsql call fsync, never fdatasync, on
// Linux. In WAL mode with synchronous=FULL a commit fsyncs the -wal file
// once; the directory is fsynced once, at the first sync of a newly
// created -wal (and of a newly created rollback journal, such as the one of
// the switch to WAL). The database file's own creation is never followed
// by a directory fsync of its own: the journal's or WAL's covers it.
// synchronous=NORMAL syncs the WAL only at checkpoints, OFF never: commits
// after the last sync are lost at a cut. In rollback journal mode DELETE
// with FULL, a commit fsyncs the journal twice and the database once, and
// the directory after creating the journal but not after deleting it: at a
// cut the last commit's journal comes back and SQLite rolls that commit
// back; EXTRA fsyncs the directory after the delete too and keeps it.
// The -shm file is never synced, and SQLite rebuilds it after a cut.
//
// # Lifecycle
//
// Mount mounts with the mount system call (root and /dev/fuse are needed;
// fusermount is not) and serves on goroutines of this process. Close
// unmounts, stops them, and returns within a bounded time; it may be called
// more than once. When a file is still open, it unmounts lazily and aborts
// the FUSE connection through /sys/fs/fuse/connections, mounting the
// fusectl file system there first if no one had (as systemd does at boot). The
// file system also closes when the context given to Mount ends: pass one
// from signal.NotifyContext so that an interrupt unmounts it. A process
// that dies with the file system mounted leaves a dead mount behind:
// Mounted tells (from /proc/self/mountinfo), and ForceUnmount removes it;
// each mount names its process in its source (lossyfs-PID), and Mount
// first removes those of processes that have exited (SweepDead).
// Available says why FUSE cannot be used on this machine; callers report
// "NOT RUN: <reason>" with it.
package lossyfs
