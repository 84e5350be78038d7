package lossyfs

import (
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Attributes, opening and closing.

// getattr fills out with n's visible attributes.
func (t *tree) getattr(n *inode, out *fuse.Attr) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.dead {
		return syscall.EIO
	}
	t.fillAttrLocked(n, out)
	return 0
}

func (t *tree) fillAttrLocked(n *inode, out *fuse.Attr) {
	size := n.size()
	out.Ino = n.id
	out.Mode = n.kind.typeBits() | n.attrs.perm
	out.Size = uint64(size)
	out.Blocks = uint64((size + 511) / 512)
	out.Blksize = pageSize
	out.Nlink = uint32(len(n.links))
	if n.kind == dirKind {
		out.Nlink = 2
	}
	out.Owner = fuse.Owner{Uid: n.attrs.uid, Gid: n.attrs.gid}
	a, m, c := n.attrs.atime, n.attrs.mtime, n.attrs.ctime
	out.SetTimes(&a, &m, &c)
}

// attrChange is what a setattr request changes besides the size.
type attrChange struct {
	mode         *uint32
	uid, gid     *uint32
	atime, mtime *time.Time
}

// setattr applies a change of attributes. Mode and owner go to the backing
// name at once, when there is one; times stay in memory.
func (t *tree) setattr(n *inode, ch attrChange) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.dead {
		return syscall.EIO
	}
	path, durable := n.durablePath(t.backing)
	if ch.mode != nil {
		if durable && n.kind != symlinkKind {
			if err := os.Chmod(path, os.FileMode(*ch.mode&0o777)|modeExtra(*ch.mode)); err != nil {
				return t.backingErrorLocked("chmod backing file", err)
			}
		}
		n.attrs.perm = *ch.mode
	}
	if ch.uid != nil || ch.gid != nil {
		uid, gid := n.attrs.uid, n.attrs.gid
		if ch.uid != nil {
			uid = *ch.uid
		}
		if ch.gid != nil {
			gid = *ch.gid
		}
		if durable {
			if err := os.Lchown(path, int(uid), int(gid)); err != nil {
				return t.backingErrorLocked("chown backing file", err)
			}
		}
		n.attrs.uid, n.attrs.gid = uid, gid
	}
	if ch.atime != nil {
		n.attrs.atime = *ch.atime
	}
	if ch.mtime != nil {
		n.attrs.mtime = *ch.mtime
	}
	n.attrs.ctime = time.Now()
	return 0
}

// open counts an open handle of a file, and empties it for O_TRUNC.
func (t *tree) open(n *inode, flags uint32) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.dead {
		return syscall.EIO
	}
	if n.kind == dirKind {
		return syscall.EISDIR
	}
	if flags&syscall.O_TRUNC != 0 && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		if errno := t.fileLocked(n); errno != 0 {
			return errno
		}
		c := n.content
		c.markDirty(0, int64(len(c.data)))
		c.resize(0)
	}
	n.opens++
	return 0
}

// release counts a closed handle.
func (t *tree) release(n *inode) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.opens > 0 {
		n.opens--
	}
	t.forgetIfGoneLocked(n)
}

// readlink returns a symlink's target.
func (t *tree) readlink(n *inode) (string, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.dead {
		return "", syscall.EIO
	}
	if n.kind != symlinkKind {
		return "", syscall.EINVAL
	}
	return n.target, 0
}
