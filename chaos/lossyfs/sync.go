package lossyfs

import "syscall"

// fsyncFlagDatasync is FUSE's FUSE_FSYNC_FDATASYNC bit of an fsync
// request's flags: the call was fdatasync.
const fsyncFlagDatasync = 1

// fsync makes durable what fsync or fdatasync of n promises: a file's
// content and size, a directory's entry changes.
func (t *tree) fsync(n *inode, flags uint32) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	call := SyncCall{Path: n.visiblePath(), Kind: syncKind(n.kind == dirKind, flags)}
	if n.dead {
		call.Err = syscall.EIO.Error()
		t.stats.synced(call)
		return syscall.EIO
	}
	var errno syscall.Errno
	if n.kind == dirKind {
		call.Entries, errno = t.commitDirLocked(n)
	} else {
		call.Bytes, errno = t.syncContentLocked(n)
	}
	if errno != 0 {
		call.Err = errno.Error()
	}
	t.stats.synced(call)
	return errno
}

// syncKind names a sync call.
func syncKind(dir bool, flags uint32) SyncKind {
	data := flags&fsyncFlagDatasync != 0
	switch {
	case dir && data:
		return DirFdatasync
	case dir:
		return DirFsync
	case data:
		return Fdatasync
	default:
		return Fsync
	}
}
