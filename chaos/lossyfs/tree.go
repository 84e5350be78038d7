package lossyfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// tree is the file system's state: the inodes with their visible and
// durable states, the journal of entry changes not yet durable, and the
// counters. One mutex guards it all; every method that is not named
// *Locked takes it.
type tree struct {
	mu      sync.Mutex
	backing string
	opts    Options

	root    *inode
	nextID  uint64
	inodes  map[uint64]*inode
	journal []entryOp
	cuts    int

	stats *recorder
}

// newTree opens the backing directory as the durable state.
func newTree(backing string, opts Options) (*tree, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(backing, &st); err != nil {
		return nil, fmt.Errorf("lossyfs: stat backing directory %s: %w", backing, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, fmt.Errorf("lossyfs: backing %s is not a directory", backing)
	}
	root := &inode{id: rootID, kind: dirKind, attrs: attrsOf(&st)}
	t := &tree{
		backing: backing,
		opts:    opts,
		root:    root,
		nextID:  rootID + 1,
		inodes:  map[uint64]*inode{rootID: root},
		stats:   newRecorder(opts.SyncLogSize),
	}
	return t, nil
}

// newInodeLocked registers a new inode of kind k.
func (t *tree) newInodeLocked(k kind, a attrs) *inode {
	n := &inode{id: t.nextID, kind: k, attrs: a}
	t.nextID++
	t.inodes[n.id] = n
	return n
}

// forgetIfGoneLocked drops an inode from the registry once nothing can
// reach it any more: no name, visible or durable, and no open handle.
func (t *tree) forgetIfGoneLocked(n *inode) {
	if n.id != rootID && len(n.links) == 0 && len(n.durableLinks) == 0 && n.opens == 0 {
		delete(t.inodes, n.id)
	}
}

// backingErrorLocked turns an error of the backing directory into the errno a
// caller gets, and records it.
func (t *tree) backingErrorLocked(what string, err error) syscall.Errno {
	t.stats.backingError(fmt.Sprintf("%s: %v", what, err))
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != 0 {
		return errno
	}
	return syscall.EIO
}

// attrsOf reads the attributes of a stat result.
func attrsOf(st *syscall.Stat_t) attrs {
	return attrs{
		perm:  st.Mode &^ syscall.S_IFMT,
		uid:   st.Uid,
		gid:   st.Gid,
		atime: time.Unix(st.Atim.Unix()),
		mtime: time.Unix(st.Mtim.Unix()),
		ctime: time.Unix(st.Ctim.Unix()),
	}
}

// kindOf is the kind of a stat mode, ok false for what the file system
// does not show (devices, sockets, fifos).
func kindOf(mode uint32) (kind, bool) {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return fileKind, true
	case syscall.S_IFDIR:
		return dirKind, true
	case syscall.S_IFLNK:
		return symlinkKind, true
	}
	return 0, false
}

// loadDirLocked reads a directory's entries from the backing directory the
// first time it is looked into.
func (t *tree) loadDirLocked(d *inode) syscall.Errno {
	if d.loaded {
		return 0
	}
	path, ok := d.durablePath(t.backing)
	if !ok {
		// Only a directory created through the mount has no backing
		// name, and it is created loaded.
		return syscall.EIO
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return t.backingErrorLocked("read backing directory", err)
	}
	children := make(map[string]*inode, len(entries))
	for _, e := range entries {
		n, errno := t.loadEntryLocked(d, path, e.Name())
		if errno != 0 {
			return errno
		}
		if n != nil {
			children[e.Name()] = n
		}
	}
	d.children = children
	d.durableChildren = cloneEntries(children)
	d.loaded = true
	return 0
}

// loadEntryLocked makes the inode of one entry of a backing directory; nil
// for an entry the file system does not show.
func (t *tree) loadEntryLocked(d *inode, dirPath, name string) (*inode, syscall.Errno) {
	path := dirPath + "/" + name
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, t.backingErrorLocked("stat backing file", err)
	}
	k, ok := kindOf(st.Mode)
	if !ok {
		return nil, 0
	}
	n := t.newInodeLocked(k, attrsOf(&st))
	n.links = []link{{d, name}}
	n.durableLinks = []link{{d, name}}
	n.durableSize = st.Size
	if k == symlinkKind {
		target, err := os.Readlink(path)
		if err != nil {
			return nil, t.backingErrorLocked("read backing symlink", err)
		}
		n.target = target
	}
	return n, 0
}

// refreshLocked rereads the attributes and size of an inode from its
// backing name, after a cut.
func (t *tree) refreshLocked(n *inode) {
	path, ok := n.durablePath(t.backing)
	if !ok {
		return
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.backingErrorLocked("stat backing file after cut", err)
		return
	}
	n.attrs = attrsOf(&st)
	n.durableSize = st.Size
}

func cloneEntries(m map[string]*inode) map[string]*inode {
	out := make(map[string]*inode, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
