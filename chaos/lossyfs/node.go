package lossyfs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is the FUSE face of an inode: go-fuse calls its methods, which
// hand the work to the tree.
type node struct {
	fs.Inode
	t  *tree
	in *inode
}

var (
	_ fs.NodeLookuper   = (*node)(nil)
	_ fs.NodeGetattrer  = (*node)(nil)
	_ fs.NodeSetattrer  = (*node)(nil)
	_ fs.NodeOpener     = (*node)(nil)
	_ fs.NodeCreater    = (*node)(nil)
	_ fs.NodeReader     = (*node)(nil)
	_ fs.NodeWriter     = (*node)(nil)
	_ fs.NodeFsyncer    = (*node)(nil)
	_ fs.NodeFlusher    = (*node)(nil)
	_ fs.NodeReleaser   = (*node)(nil)
	_ fs.NodeAllocater  = (*node)(nil)
	_ fs.NodeReaddirer  = (*node)(nil)
	_ fs.NodeMkdirer    = (*node)(nil)
	_ fs.NodeSymlinker  = (*node)(nil)
	_ fs.NodeReadlinker = (*node)(nil)
	_ fs.NodeLinker     = (*node)(nil)
	_ fs.NodeUnlinker   = (*node)(nil)
	_ fs.NodeRmdirer    = (*node)(nil)
	_ fs.NodeRenamer    = (*node)(nil)
	_ fs.NodeStatfser   = (*node)(nil)
)

// handle is an open file. The node does the work; the handle only lets
// Release count it.
type handle struct{}

// child returns the FUSE inode of c, filling out.
func (n *node) child(ctx context.Context, c *inode, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.t.getattr(c, &out.Attr); errno != 0 {
		return nil, errno
	}
	return n.NewInode(ctx, &node{t: n.t, in: c}, fs.StableAttr{Mode: c.kind.typeBits(), Ino: c.id}), 0
}

// caller returns the uid and gid of the process that made the request.
func caller(ctx context.Context) (uid, gid uint32) {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Uid, c.Gid
	}
	return uint32(syscall.Geteuid()), uint32(syscall.Getegid())
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, errno := n.t.lookup(n.in, name)
	if errno != 0 {
		return nil, errno
	}
	return n.child(ctx, c, out)
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return n.t.getattr(n.in, &out.Attr)
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if errno := n.t.truncate(n.in, int64(size)); errno != 0 {
			return errno
		}
	}
	var ch attrChange
	if mode, ok := in.GetMode(); ok {
		ch.mode = &mode
	}
	if uid, ok := in.GetUID(); ok {
		ch.uid = &uid
	}
	if gid, ok := in.GetGID(); ok {
		ch.gid = &gid
	}
	if atime, ok := in.GetATime(); ok {
		ch.atime = &atime
	}
	if mtime, ok := in.GetMTime(); ok {
		ch.mtime = &mtime
	}
	if ch != (attrChange{}) {
		if errno := n.t.setattr(n.in, ch); errno != 0 {
			return errno
		}
	}
	return n.t.getattr(n.in, &out.Attr)
}

// Open opens a file. No FOPEN_KEEP_CACHE: the kernel drops its cached
// pages at every open. No FOPEN_DIRECT_IO: shared mmap works.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.t.open(n.in, flags); errno != 0 {
		return nil, 0, errno
	}
	return &handle{}, 0, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	uid, gid := caller(ctx)
	c, errno := n.t.create(n.in, name, newEntry{kind: fileKind, perm: mode, uid: uid, gid: gid})
	if errno == syscall.EEXIST && flags&syscall.O_EXCL == 0 {
		// Another process created it since the kernel looked: open it.
		if c, errno = n.t.lookup(n.in, name); errno == 0 && c.kind == dirKind {
			errno = syscall.EISDIR
		}
	}
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if errno := n.t.open(c, flags); errno != 0 {
		return nil, nil, 0, errno
	}
	child, errno := n.child(ctx, c, out)
	if errno != 0 {
		n.t.release(c)
		return nil, nil, 0, errno
	}
	return child, &handle{}, 0, 0
}

func (n *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	k, errno := n.t.read(n.in, dest, off)
	if errno != 0 {
		return nil, errno
	}
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	k, errno := n.t.write(n.in, data, off)
	return uint32(k), errno
}

// Fsync serves fsync and fdatasync of files and of directories.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	return n.t.fsync(n.in, flags)
}

// Flush (at every close) makes nothing durable: close does not sync.
func (n *node) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	return 0
}

func (n *node) Release(ctx context.Context, f fs.FileHandle) syscall.Errno {
	n.t.release(n.in)
	return 0
}

// Allocate serves fallocate without flags (posix_fallocate): it extends
// the file with zeros.
func (n *node) Allocate(ctx context.Context, f fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	if mode != 0 {
		return syscall.EOPNOTSUPP
	}
	return n.t.allocate(n.in, int64(off+size))
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	entries, errno := n.t.list(n.in)
	if errno != 0 {
		return nil, errno
	}
	out := make([]fuse.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = fuse.DirEntry{Name: e.name, Ino: e.id, Mode: e.kind.typeBits()}
	}
	return fs.NewListDirStream(out), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	uid, gid := caller(ctx)
	c, errno := n.t.create(n.in, name, newEntry{kind: dirKind, perm: mode, uid: uid, gid: gid})
	if errno != 0 {
		return nil, errno
	}
	return n.child(ctx, c, out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	uid, gid := caller(ctx)
	c, errno := n.t.create(n.in, name, newEntry{kind: symlinkKind, perm: 0o777, uid: uid, gid: gid, target: target})
	if errno != 0 {
		return nil, errno
	}
	return n.child(ctx, c, out)
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	target, errno := n.t.readlink(n.in)
	return []byte(target), errno
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	other, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	if errno := n.t.link(n.in, name, other.in); errno != 0 {
		return nil, errno
	}
	return n.child(ctx, other.in, out)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.t.unlink(n.in, name)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.t.rmdir(n.in, name)
}

// renameNoReplace is RENAME_NOREPLACE; other rename flags (RENAME_EXCHANGE,
// RENAME_WHITEOUT) are not supported.
const renameNoReplace = 1

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if flags&^renameNoReplace != 0 {
		return syscall.EINVAL
	}
	return n.t.rename(n.in, name, to.in, newName, flags&renameNoReplace != 0)
}

// Statfs reports the backing directory's file system.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Statfs(n.t.backing, &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStatfsT(&st)
	return 0
}
