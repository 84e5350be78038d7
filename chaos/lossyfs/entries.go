package lossyfs

import (
	"sort"
	"syscall"
	"time"
)

// The visible entry changes: each checks what POSIX asks, changes the
// visible tree and appends itself to the journal, from where a directory
// fsync makes it durable (journal.go).

// maxNameLen is the longest name an entry may have.
const maxNameLen = 255

// dirLocked checks that d is a live directory and loads it.
func (t *tree) dirLocked(d *inode) syscall.Errno {
	if d.dead {
		return syscall.EIO
	}
	if d.kind != dirKind {
		return syscall.ENOTDIR
	}
	return t.loadDirLocked(d)
}

// lookup returns the visible entry name of d.
func (t *tree) lookup(d *inode, name string) (*inode, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.dirLocked(d); errno != 0 {
		return nil, errno
	}
	n, ok := d.children[name]
	if !ok {
		return nil, syscall.ENOENT
	}
	return n, 0
}

// dirEntry is one entry of a directory listing.
type dirEntry struct {
	name string
	id   uint64
	kind kind
}

// list returns d's visible entries, sorted by name.
func (t *tree) list(d *inode) ([]dirEntry, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.dirLocked(d); errno != 0 {
		return nil, errno
	}
	out := make([]dirEntry, 0, len(d.children))
	for name, n := range d.children {
		out = append(out, dirEntry{name: name, id: n.id, kind: n.kind})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, 0
}

// newEntry describes an inode to create.
type newEntry struct {
	kind     kind
	perm     uint32
	uid, gid uint32
	target   string // of a symlink
}

// create makes a new file, directory or symlink name in d.
func (t *tree) create(d *inode, name string, e newEntry) (*inode, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.dirLocked(d); errno != 0 {
		return nil, errno
	}
	if len(name) > maxNameLen {
		return nil, syscall.ENAMETOOLONG
	}
	if _, ok := d.children[name]; ok {
		return nil, syscall.EEXIST
	}
	now := time.Now()
	n := t.newInodeLocked(e.kind, attrs{perm: e.perm &^ syscall.S_IFMT, uid: e.uid, gid: e.gid, atime: now, mtime: now, ctime: now})
	n.target = e.target
	if e.kind == dirKind {
		n.children = map[string]*inode{}
		n.durableChildren = map[string]*inode{}
		n.loaded = true
	}
	if e.kind == fileKind {
		n.content = &fileContent{dirty: map[int64]struct{}{}}
	}
	d.children[name] = n
	n.links = []link{{d, name}}
	d.attrs.mtime = now
	t.journalLocked(entryOp{kind: opCreate, dir: d, name: name, node: n})
	return n, 0
}

// link gives n the new name name in d.
func (t *tree) link(d *inode, name string, n *inode) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.dirLocked(d); errno != 0 {
		return errno
	}
	if n.dead {
		return syscall.EIO
	}
	if n.kind == dirKind {
		return syscall.EPERM
	}
	if len(n.links) == 0 {
		return syscall.ENOENT
	}
	if len(name) > maxNameLen {
		return syscall.ENAMETOOLONG
	}
	if _, ok := d.children[name]; ok {
		return syscall.EEXIST
	}
	d.children[name] = n
	n.links = append(n.links, link{d, name})
	t.journalLocked(entryOp{kind: opLink, dir: d, name: name, node: n})
	return 0
}

// unlink removes the name name of a file or symlink from d.
func (t *tree) unlink(d *inode, name string) syscall.Errno {
	return t.remove(d, name, false)
}

// rmdir removes the empty directory name from d.
func (t *tree) rmdir(d *inode, name string) syscall.Errno {
	return t.remove(d, name, true)
}

func (t *tree) remove(d *inode, name string, isDir bool) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.dirLocked(d); errno != 0 {
		return errno
	}
	n, ok := d.children[name]
	if !ok {
		return syscall.ENOENT
	}
	switch {
	case isDir && n.kind != dirKind:
		return syscall.ENOTDIR
	case !isDir && n.kind == dirKind:
		return syscall.EISDIR
	}
	op := opUnlink
	if isDir {
		if errno := t.loadDirLocked(n); errno != 0 {
			return errno
		}
		if len(n.children) > 0 {
			return syscall.ENOTEMPTY
		}
		op = opRmdir
	}
	delete(d.children, name)
	n.links = removeLink(n.links, link{d, name})
	d.attrs.mtime = time.Now()
	t.journalLocked(entryOp{kind: op, dir: d, name: name, node: n})
	t.forgetIfGoneLocked(n)
	return 0
}

// rename moves the entry name of d to toName in to, replacing what was
// there unless noReplace.
func (t *tree) rename(d *inode, name string, to *inode, toName string, noReplace bool) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.dirLocked(d); errno != 0 {
		return errno
	}
	if errno := t.dirLocked(to); errno != 0 {
		return errno
	}
	n, ok := d.children[name]
	if !ok {
		return syscall.ENOENT
	}
	if len(toName) > maxNameLen {
		return syscall.ENAMETOOLONG
	}
	replaced, exists := to.children[toName]
	if errno := t.checkReplaceLocked(n, replaced, exists, noReplace); errno != 0 {
		return errno
	}
	if n.kind == dirKind && isAncestor(n, to) {
		return syscall.EINVAL
	}
	if replaced == n {
		return 0 // two names of one file: POSIX says do nothing
	}
	if exists {
		replaced.links = removeLink(replaced.links, link{to, toName})
	}
	delete(d.children, name)
	to.children[toName] = n
	n.links = replaceLink(n.links, link{d, name}, link{to, toName})
	now := time.Now()
	d.attrs.mtime, to.attrs.mtime = now, now
	t.journalLocked(entryOp{kind: opRename, dir: d, name: name, node: n, toDir: to, toName: toName, replaced: replaced})
	if exists {
		t.forgetIfGoneLocked(replaced)
	}
	return 0
}

// checkReplaceLocked says whether n may be renamed over replaced.
func (t *tree) checkReplaceLocked(n, replaced *inode, exists, noReplace bool) syscall.Errno {
	if !exists {
		return 0
	}
	if noReplace {
		return syscall.EEXIST
	}
	if replaced.kind == dirKind {
		if n.kind != dirKind {
			return syscall.EISDIR
		}
		if errno := t.loadDirLocked(replaced); errno != 0 {
			return errno
		}
		if len(replaced.children) > 0 {
			return syscall.ENOTEMPTY
		}
	} else if n.kind == dirKind {
		return syscall.ENOTDIR
	}
	return 0
}
