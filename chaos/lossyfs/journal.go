package lossyfs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// The journal holds the entry changes that are visible but not durable,
// in the order they happened. Replaying a prefix of it onto the durable
// tree and the backing directory makes them durable; because the durable
// tree after replaying change i is the visible tree right after change i,
// each change finds the backing directory as it found the visible tree.

// opKind is the kind of an entry change.
type opKind uint8

const (
	opCreate opKind = iota + 1
	opLink
	opUnlink
	opRmdir
	opRename
)

// entryOp is one entry change: node got (create, link), lost (unlink,
// rmdir) or moved from (rename) the name name of dir; a rename moved it to
// toName of toDir, replacing replaced (nil if there was nothing).
type entryOp struct {
	kind     opKind
	dir      *inode
	name     string
	node     *inode
	toDir    *inode
	toName   string
	replaced *inode
}

// String names the change by the paths it touched: "create db-wal",
// "rename a -> b".
func (op entryOp) String() string {
	from := filepath.Join(op.dir.visiblePath(), op.name)
	switch op.kind {
	case opCreate:
		return "create " + from
	case opLink:
		return "link " + from
	case opUnlink:
		return "unlink " + from
	case opRmdir:
		return "rmdir " + from
	case opRename:
		return "rename " + from + " -> " + filepath.Join(op.toDir.visiblePath(), op.toName)
	}
	return fmt.Sprintf("change %d of %s", op.kind, from)
}

// touches says whether the change is to an entry of d.
func (op entryOp) touches(d *inode) bool {
	return op.dir == d || op.toDir == d
}

// journalLocked appends a change. Past Options.MaxJournal changes, the
// oldest half are committed, as a file system commits its journal on a
// timer.
func (t *tree) journalLocked(op entryOp) {
	t.journal = append(t.journal, op)
	t.stats.entryChange()
	if len(t.journal) > t.opts.MaxJournal {
		n := len(t.journal) / 2
		if _, errno := t.commitLocked(n); errno == 0 {
			t.stats.autoCommitted(n)
		}
	}
}

// commitDirLocked makes durable every journaled change up to the last one
// that touched d, and returns how many it committed.
func (t *tree) commitDirLocked(d *inode) (int, syscall.Errno) {
	last := -1
	for i, op := range t.journal {
		if op.touches(d) {
			last = i
		}
	}
	return t.commitLocked(last + 1)
}

// commitLocked replays the first n journaled changes onto the backing
// directory, then fsyncs the backing directories they changed. On an error
// the changes replayed so far stay replayed and the rest stay journaled.
func (t *tree) commitLocked(n int) (int, syscall.Errno) {
	touched := map[*inode]struct{}{}
	done := 0
	var failed syscall.Errno
	for ; done < n; done++ {
		if errno := t.replayLocked(t.journal[done], touched); errno != 0 {
			failed = errno
			break
		}
	}
	t.journal = append([]entryOp(nil), t.journal[done:]...)
	if errno := t.syncDirsLocked(touched); errno != 0 && failed == 0 {
		failed = errno
	}
	return done, failed
}

// replayLocked applies one change to the backing directory and, once that
// worked, to the durable tree.
func (t *tree) replayLocked(op entryOp, touched map[*inode]struct{}) syscall.Errno {
	dirPath, ok := op.dir.durablePath(t.backing)
	if !ok {
		return t.backingErrorLocked("replay", fmt.Errorf("directory %s has no backing name", op.dir.visiblePath()))
	}
	path := filepath.Join(dirPath, op.name)
	touched[op.dir] = struct{}{}
	switch op.kind {
	case opCreate:
		if errno := t.materializeLocked(op.node, path); errno != 0 {
			return errno
		}
		t.addDurableLocked(op.dir, op.name, op.node)
	case opLink:
		src, ok := op.node.durablePath(t.backing)
		if !ok {
			return t.backingErrorLocked("replay link", fmt.Errorf("%s has no backing name", op.node.visiblePath()))
		}
		if err := os.Link(src, path); err != nil {
			return t.backingErrorLocked("link in backing directory", err)
		}
		t.addDurableLocked(op.dir, op.name, op.node)
	case opUnlink, opRmdir:
		if err := os.Remove(path); err != nil {
			return t.backingErrorLocked("remove from backing directory", err)
		}
		t.removeDurableLocked(op.dir, op.name, op.node)
	case opRename:
		return t.replayRenameLocked(op, path, touched)
	}
	return 0
}

func (t *tree) replayRenameLocked(op entryOp, path string, touched map[*inode]struct{}) syscall.Errno {
	toPath, ok := op.toDir.durablePath(t.backing)
	if !ok {
		return t.backingErrorLocked("replay rename", fmt.Errorf("directory %s has no backing name", op.toDir.visiblePath()))
	}
	touched[op.toDir] = struct{}{}
	if err := os.Rename(path, filepath.Join(toPath, op.toName)); err != nil {
		return t.backingErrorLocked("rename in backing directory", err)
	}
	if op.replaced != nil {
		t.removeDurableLocked(op.toDir, op.toName, op.replaced)
	}
	delete(op.dir.durableChildren, op.name)
	op.toDir.durableChildren[op.toName] = op.node
	op.node.durableLinks = replaceLink(op.node.durableLinks, link{op.dir, op.name}, link{op.toDir, op.toName})
	return 0
}

func (t *tree) addDurableLocked(d *inode, name string, n *inode) {
	d.durableChildren[name] = n
	n.durableLinks = append(n.durableLinks, link{d, name})
}

// removeDurableLocked removes a durable name. An inode left without one
// will never get one again (no later change can name it: it had no visible
// name at that point of the history), so its synced content is dropped.
func (t *tree) removeDurableLocked(d *inode, name string, n *inode) {
	delete(d.durableChildren, name)
	n.durableLinks = removeLink(n.durableLinks, link{d, name})
	if len(n.durableLinks) == 0 {
		n.durableData = nil
	}
	t.forgetIfGoneLocked(n)
}

// materializeLocked creates a new inode at path in the backing directory,
// with its durable content.
func (t *tree) materializeLocked(n *inode, path string) syscall.Errno {
	switch n.kind {
	case dirKind:
		if err := os.Mkdir(path, 0o700); err != nil {
			return t.backingErrorLocked("mkdir in backing directory", err)
		}
	case symlinkKind:
		if err := os.Symlink(n.target, path); err != nil {
			return t.backingErrorLocked("symlink in backing directory", err)
		}
	default:
		if err := writeFileSynced(path, n.durableData); err != nil {
			return t.backingErrorLocked("create in backing directory", err)
		}
		if n.content == nil {
			n.durableSize = int64(len(n.durableData))
		}
		n.durableData = nil
	}
	if err := os.Lchown(path, int(n.attrs.uid), int(n.attrs.gid)); err != nil {
		return t.backingErrorLocked("chown in backing directory", err)
	}
	if n.kind != symlinkKind {
		if err := os.Chmod(path, os.FileMode(n.attrs.perm&0o777)|modeExtra(n.attrs.perm)); err != nil {
			return t.backingErrorLocked("chmod in backing directory", err)
		}
	}
	return 0
}

// modeExtra turns setuid, setgid and sticky bits into os.FileMode bits.
func modeExtra(perm uint32) os.FileMode {
	var m os.FileMode
	if perm&syscall.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if perm&syscall.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if perm&syscall.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m
}

// writeFileSynced creates (or empties) path with data and fsyncs it.
func writeFileSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDirsLocked fsyncs the backing directories of the given inodes that
// still have a backing name.
func (t *tree) syncDirsLocked(dirs map[*inode]struct{}) syscall.Errno {
	for d := range dirs {
		path, ok := d.durablePath(t.backing)
		if !ok {
			continue
		}
		if err := syncPath(path); err != nil {
			return t.backingErrorLocked("fsync backing directory", err)
		}
	}
	return 0
}

// syncPath fsyncs the file or directory at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
