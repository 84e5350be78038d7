package lossyfs

import (
	"path/filepath"
	"syscall"
	"time"
)

// kind is what an inode is.
type kind uint8

const (
	fileKind kind = iota + 1
	dirKind
	symlinkKind
)

// typeBits is the S_IF* bits of a kind.
func (k kind) typeBits() uint32 {
	switch k {
	case dirKind:
		return syscall.S_IFDIR
	case symlinkKind:
		return syscall.S_IFLNK
	default:
		return syscall.S_IFREG
	}
}

// link is one name of an inode: an entry of a directory.
type link struct {
	dir  *inode
	name string
}

// attrs are the attributes an inode shows besides its size.
type attrs struct {
	perm     uint32 // permission bits, without the S_IF* bits
	uid, gid uint32
	atime    time.Time
	mtime    time.Time
	ctime    time.Time
}

// inode is a file, directory or symlink of the file system, with both its
// visible state (what processes see) and its durable state (what the
// backing directory holds). Every field is guarded by tree.mu.
type inode struct {
	id    uint64
	kind  kind
	attrs attrs

	// links are the inode's visible names; durableLinks its names in the
	// backing directory. A directory has at most one of each.
	links        []link
	durableLinks []link

	// dead is set when a cut removed the inode: it is reached only through
	// file descriptors opened before the cut.
	dead bool
	// opens counts the open file handles.
	opens int

	// children and durableChildren are a directory's visible and durable
	// entries; both nil until the directory is loaded from the backing
	// directory (loaded).
	children        map[string]*inode
	durableChildren map[string]*inode
	loaded          bool

	// content is a file's visible content once read or written (nil
	// before). durableSize is its size when not loaded.
	content     *fileContent
	durableSize int64
	// durableData is what fsync made durable of a file that has no backing
	// name yet: it is written there when a directory fsync names it.
	durableData []byte

	// target is a symlink's target.
	target string
}

// pageSize is the granularity of the dirty page tracking and torn writes.
const pageSize = 4096

// fileContent is a file's whole visible content, and what changed since
// the last sync.
type fileContent struct {
	data []byte
	// dirty holds the index of every page that may differ from the durable
	// content.
	dirty map[int64]struct{}
	// syncedSize is the durable size.
	syncedSize int64
}

// unsynced says whether the content differs from the durable one.
func (c *fileContent) unsynced() bool {
	return len(c.dirty) > 0 || int64(len(c.data)) != c.syncedSize
}

// markDirty records that the bytes [from, to) changed.
func (c *fileContent) markDirty(from, to int64) {
	for p := from / pageSize; p*pageSize < to; p++ {
		c.dirty[p] = struct{}{}
	}
}

// size is the visible size of a file, or of a symlink's target.
func (n *inode) size() int64 {
	switch {
	case n.kind == symlinkKind:
		return int64(len(n.target))
	case n.content != nil:
		return int64(len(n.content.data))
	case n.kind == fileKind:
		return n.durableSize
	default:
		return pageSize
	}
}

// removeLink removes one occurrence of l from links.
func removeLink(links []link, l link) []link {
	for i, x := range links {
		if x == l {
			return append(links[:i:i], links[i+1:]...)
		}
	}
	return links
}

// replaceLink replaces one occurrence of from by to in links.
func replaceLink(links []link, from, to link) []link {
	out := append([]link(nil), links...)
	for i, x := range out {
		if x == from {
			out[i] = to
			return out
		}
	}
	return append(out, to)
}

// maxDepth bounds the walks up the tree: no tree is deeper.
const maxDepth = 4096

// visiblePath is the inode's path relative to the mount ("" for the root),
// through its first visible name, or its last durable one for an inode
// that has no visible name left.
func (n *inode) visiblePath() string {
	var parts []string
	for cur, i := n, 0; i < maxDepth; i++ {
		var l link
		switch {
		case len(cur.links) > 0:
			l = cur.links[0]
		case len(cur.durableLinks) > 0:
			l = cur.durableLinks[0]
		case cur.id == rootID:
			return joinOrDot(reversed(parts))
		default:
			return filepath.Join(append([]string{"(unlinked)"}, reversed(parts)...)...)
		}
		parts = append(parts, l.name)
		cur = l.dir
	}
	return joinOrDot(reversed(parts))
}

// joinOrDot joins path elements, "." for none.
func joinOrDot(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return filepath.Join(parts...)
}

// durablePath is the inode's path in the backing directory, through its
// first durable name; ok is false when it has none.
func (n *inode) durablePath(backing string) (path string, ok bool) {
	parts := []string{}
	for cur, i := n, 0; i < maxDepth; i++ {
		if cur.id == rootID {
			return filepath.Join(append([]string{backing}, reversed(parts)...)...), true
		}
		if len(cur.durableLinks) == 0 {
			return "", false
		}
		l := cur.durableLinks[0]
		parts = append(parts, l.name)
		cur = l.dir
	}
	return "", false
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[len(s)-1-i] = x
	}
	return out
}

// isAncestor says whether a is d or one of d's visible ancestors.
func isAncestor(a, d *inode) bool {
	for cur, i := d, 0; i < maxDepth; i++ {
		if cur == a {
			return true
		}
		if len(cur.links) == 0 {
			return false
		}
		cur = cur.links[0].dir
	}
	return false
}

// rootID is the root directory's inode number (FUSE's root node id).
const rootID = 1
