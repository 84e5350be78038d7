package lossyfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is a mounted lossy file system.
type FS struct {
	mountpoint string
	backing    string
	opts       Options
	t          *tree
	server     *fuse.Server
	// conn is the FUSE connection's number (the mount's minor device
	// number), to abort it through fusectl.
	conn uint32

	closeOnce sync.Once
	closeErr  error
	closing   chan struct{} // closed when Close starts
	served    chan struct{} // closed when the server's goroutines ended
}

// Mount mounts a lossy file system on mountpoint, an existing empty
// directory, over the backing directory. It serves until Close, or until
// ctx ends.
func Mount(ctx context.Context, mountpoint, backing string, opts Options) (*FS, error) {
	opts = opts.withDefaults()
	mp, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, fmt.Errorf("lossyfs: mount point %s: %w", mountpoint, err)
	}
	back, err := filepath.Abs(backing)
	if err != nil {
		return nil, fmt.Errorf("lossyfs: backing directory %s: %w", backing, err)
	}
	t, err := newTree(back, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lossyfs: mount %s: %w", mp, err)
	}
	// What a killed run left mounted would wedge whoever touches its
	// folder; the next mount removes it, as far as it can: a leftover it
	// cannot remove is no reason not to mount.
	_ = SweepDead()
	zero := time.Duration(0)
	server, err := fs.Mount(mp, &node{t: t, in: t.root}, &fs.Options{
		MountOptions: fuse.MountOptions{
			DirectMount:       true,
			DirectMountStrict: true,                  // no fusermount: Close unmounts with umount(2)
			FsName:            sourceOf(os.Getpid()), // tells SweepDead whose mount it is
			Name:              "lossyfs",
			DisableXAttrs:     true,
			Debug:             opts.Debug,
		},
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		NullPermissions: true,
		ExternalNodeID:  true,
		RootStableAttr:  &fs.StableAttr{Ino: rootID},
	})
	if err != nil {
		return nil, fmt.Errorf("lossyfs: mount %s: %w", mp, err)
	}
	f := &FS{
		mountpoint: mp,
		backing:    back,
		opts:       opts,
		t:          t,
		server:     server,
		closing:    make(chan struct{}),
		served:     make(chan struct{}),
	}
	go func() {
		server.Wait()
		close(f.served)
	}()
	var st syscall.Stat_t
	if err := syscall.Stat(mp, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("lossyfs: stat mount point %s after mounting: %w", mp, err)
	}
	f.conn = minor(st.Dev)
	go f.closeWhenDone(ctx)
	return f, nil
}

// closeWhenDone closes the file system when ctx ends first.
func (f *FS) closeWhenDone(ctx context.Context) {
	select {
	case <-ctx.Done():
		f.Close()
	case <-f.closing:
	}
}

// Mountpoint is the directory the file system is mounted on.
func (f *FS) Mountpoint() string { return f.mountpoint }

// Backing is the backing directory.
func (f *FS) Backing() string { return f.backing }

// Cut simulates a power cut: it discards every change that was not made
// durable, after letting part of it through if Options.Torn. Processes
// using the mount should be stopped or killed first.
func (f *FS) Cut(ctx context.Context) (CutReport, error) {
	select {
	case <-f.closing:
		return CutReport{}, errors.New("lossyfs: cut: file system closed")
	default:
	}
	// Pages that processes dirtied through mmap are written back to the
	// file system when the kernel drops them: do it before the cut.
	if err := f.invalidate(ctx, f.t.fileIDs()); err != nil {
		return CutReport{}, fmt.Errorf("lossyfs: cut: flush kernel caches: %w", err)
	}
	report, ids := f.t.cut()
	if err := f.invalidate(ctx, ids); err != nil {
		return report, fmt.Errorf("lossyfs: cut: drop kernel caches: %w", err)
	}
	return report, nil
}

// invalidate drops the kernel's cached pages and attributes of the given
// inodes, writing back dirty pages first.
func (f *FS) invalidate(ctx context.Context, ids []uint64) error {
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := f.server.InodeNotify(id, 0, -1)
		if st != fuse.OK && st != fuse.ENOENT {
			return fmt.Errorf("invalidate inode %d: %w", id, syscall.Errno(st))
		}
	}
	return nil
}

// Stats returns what the file system counted so far.
func (f *FS) Stats() Stats {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	return f.t.stats.snapshot()
}

// Unsynced says how many entry changes wait for a directory fsync and how
// many files have content that waits for an fsync.
func (f *FS) Unsynced() (entryChanges, files int) {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	for _, n := range f.t.inodes {
		if n.content != nil && n.content.unsynced() {
			files++
		}
	}
	return len(f.t.journal), files
}

// fileIDs lists the inodes that are files.
func (t *tree) fileIDs() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]uint64, 0, len(t.inodes))
	for id, n := range t.inodes {
		if n.kind == fileKind {
			ids = append(ids, id)
		}
	}
	return ids
}

// minor is the minor number of a device number.
func minor(dev uint64) uint32 {
	return uint32((dev & 0xff) | ((dev >> 12) & 0xfff00))
}
