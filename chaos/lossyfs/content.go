package lossyfs

import (
	"os"
	"slices"
	"syscall"
	"time"
)

// File contents: reads and writes work on the in-memory visible content;
// fsync writes the changed pages to the backing file.

// maxFileSize bounds a file's size: its content is held in memory.
const maxFileSize = 1 << 36

// fileLocked checks that n is a live file and loads its content.
func (t *tree) fileLocked(n *inode) syscall.Errno {
	if n.dead {
		return syscall.EIO
	}
	if n.kind == dirKind {
		return syscall.EISDIR
	}
	if n.kind != fileKind {
		return syscall.EINVAL
	}
	if n.content != nil {
		return 0
	}
	data := slices.Clone(n.durableData)
	if path, ok := n.durablePath(t.backing); ok {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return t.backingErrorLocked("read backing file", err)
		}
	}
	n.content = &fileContent{data: data, dirty: map[int64]struct{}{}, syncedSize: int64(len(data))}
	return 0
}

// read copies the visible content at off into dest.
func (t *tree) read(n *inode, dest []byte, off int64) (int, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.fileLocked(n); errno != 0 {
		return 0, errno
	}
	if off < 0 {
		return 0, syscall.EINVAL
	}
	data := n.content.data
	if off >= int64(len(data)) {
		return 0, 0
	}
	return copy(dest, data[off:]), 0
}

// write writes data at off.
func (t *tree) write(n *inode, data []byte, off int64) (int, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.fileLocked(n); errno != 0 {
		return 0, errno
	}
	end := off + int64(len(data))
	if off < 0 || end > maxFileSize {
		return 0, syscall.EFBIG
	}
	c := n.content
	if old := int64(len(c.data)); end > old {
		c.resize(end)
		c.markDirty(old, off)
	}
	copy(c.data[off:], data)
	c.markDirty(off, end)
	n.attrs.mtime = time.Now()
	t.stats.wrote(n.visiblePath(), len(data))
	return len(data), 0
}

// truncate sets the visible size.
func (t *tree) truncate(n *inode, size int64) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.truncateLocked(n, size)
}

func (t *tree) truncateLocked(n *inode, size int64) syscall.Errno {
	if errno := t.fileLocked(n); errno != 0 {
		return errno
	}
	if size < 0 || size > maxFileSize {
		return syscall.EFBIG
	}
	c := n.content
	old := int64(len(c.data))
	c.resize(size)
	c.markDirty(min(old, size), max(old, size))
	n.attrs.mtime = time.Now()
	return 0
}

// resize sets the content's size, with zeros past the old end.
func (c *fileContent) resize(size int64) {
	old := int64(len(c.data))
	switch {
	case size <= old:
		c.data = c.data[:size]
	case size <= int64(cap(c.data)):
		c.data = c.data[:size]
		clear(c.data[old:])
	default:
		grown := make([]byte, size, max(size, 2*old))
		copy(grown, c.data)
		c.data = grown
	}
}

// syncContentLocked makes n's visible content durable, and returns how
// many bytes of changed pages it wrote.
func (t *tree) syncContentLocked(n *inode) (int64, syscall.Errno) {
	c := n.content
	if c == nil || !c.unsynced() {
		return 0, 0
	}
	written := int64(len(c.dirty)) * pageSize
	size := int64(len(c.data))
	spans := pageSpans(sortedPages(c.dirty), size)
	path, ok := n.durablePath(t.backing)
	if !ok {
		// No backing name yet: the durable content waits in memory
		// for a directory fsync to name it (materializeLocked).
		n.durableData = applySpans(n.durableData, c.data, spans)
	} else if err := writeSpans(path, c.data, spans, c.syncedSize, size); err != nil {
		return 0, t.backingErrorLocked("write backing file", err)
	}
	c.dirty = map[int64]struct{}{}
	c.syncedSize = int64(len(c.data))
	return written, 0
}

// sortedPages lists page indexes in order.
func sortedPages(pages map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(pages))
	for p := range pages {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// applySpans returns dst resized to len(src) with the spans of src copied
// in. Every byte outside the spans is equal already: the spans cover every
// page changed since dst was synced, and every page past its old size.
func applySpans(dst, src []byte, spans []span) []byte {
	if len(src) <= cap(dst) {
		dst = dst[:len(src)]
	} else {
		dst = append(make([]byte, 0, len(src)), dst...)[:len(src)]
	}
	for _, s := range spans {
		copy(dst[s.from:s.to], src[s.from:s.to])
	}
	return dst
}

// pageSpans turns the pages below size into byte spans.
func pageSpans(pages []int64, size int64) []span {
	spans := make([]span, 0, len(pages))
	for _, p := range pages {
		if from := p * pageSize; from < size {
			spans = append(spans, span{from, min(from+pageSize, size)})
		}
	}
	return spans
}

// allocate extends the file with zeros up to size, if it is shorter.
func (t *tree) allocate(n *inode, size int64) syscall.Errno {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errno := t.fileLocked(n); errno != 0 {
		return errno
	}
	if int64(len(n.content.data)) >= size {
		return 0
	}
	return t.truncateLocked(n, size)
}
