package lossyfs

import (
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// CutReport says what a cut discarded.
type CutReport struct {
	// Cut numbers the cuts of this mount from 1.
	Cut int `json:"cut"`
	// EntryChanges is how many journaled entry changes were discarded;
	// Discarded names the first maxDiscardedNames of them, in order
	// ("unlink db-wal").
	EntryChanges int      `json:"entry_changes"`
	Discarded    []string `json:"discarded,omitempty"`
	// Files is how many files had unsynced content or size (all of it
	// lost, or part of it with Torn).
	Files int `json:"files"`
	// Inodes is how many files, directories and symlinks disappeared:
	// those the backing directory does not name.
	Inodes int `json:"inodes"`
	// TornPages is how many unsynced pages a torn cut let through.
	TornPages int  `json:"torn_pages"`
	Torn      bool `json:"torn"`
}

// maxDiscardedNames bounds the discarded entry changes a cut report names.
const maxDiscardedNames = 20

// cut discards every change that is not durable and returns what it
// discarded and the inodes whose kernel caches must be dropped.
func (t *tree) cut() (CutReport, []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cuts++
	t.stats.cut()
	report := CutReport{Cut: t.cuts, EntryChanges: len(t.journal), Torn: t.opts.Torn}
	for _, op := range t.journal[:min(len(t.journal), maxDiscardedNames)] {
		report.Discarded = append(report.Discarded, op.String())
	}
	t.journal = nil
	all := make([]uint64, 0, len(t.inodes))
	for id, n := range t.inodes {
		all = append(all, id)
		if n.content != nil && n.content.unsynced() {
			report.Files++
			if t.opts.Torn {
				report.TornPages += t.tearLocked(n)
			}
		}
	}
	reachable := t.durablyReachableLocked()
	for id, n := range t.inodes {
		if _, ok := reachable[n]; !ok {
			n.dead = true
			delete(t.inodes, id)
			report.Inodes++
			continue
		}
		t.resetLocked(n)
	}
	return report, all
}

// durablyReachableLocked returns the inodes the durable tree reaches from
// the root.
func (t *tree) durablyReachableLocked() map[*inode]struct{} {
	seen := map[*inode]struct{}{t.root: {}}
	queue := []*inode{t.root}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, n := range d.durableChildren {
			if _, ok := seen[n]; ok {
				continue
			}
			seen[n] = struct{}{}
			if n.kind == dirKind {
				queue = append(queue, n)
			}
		}
	}
	return seen
}

// resetLocked sets a surviving inode's visible state to its durable one.
func (t *tree) resetLocked(n *inode) {
	n.links = append([]link(nil), n.durableLinks...)
	n.content = nil
	n.durableData = nil
	if n.loaded {
		n.children = cloneEntries(n.durableChildren)
	}
	t.refreshLocked(n)
}

// tearLocked lets part of n's unsynced content reach its backing file, as
// a torn write at a power loss would, and returns how many pages it let
// through. The choice is drawn from Options.Seed, the cut's number and the
// file's path in the backing directory: the same run tears the same way,
// wherever the backing directory is.
func (t *tree) tearLocked(n *inode) int {
	path, ok := n.durablePath(t.backing)
	if !ok {
		return 0 // its name is not durable: it disappears whole
	}
	c := n.content
	rel, err := filepath.Rel(t.backing, path)
	if err != nil {
		rel = path
	}
	rng := rand.New(rand.NewPCG(t.opts.Seed, pathHash(rel)^uint64(t.cuts)))
	common := min(c.syncedSize, int64(len(c.data)))
	var spans []span
	for _, p := range sortedPages(c.dirty) {
		if p*pageSize < common && rng.IntN(2) == 0 {
			spans = append(spans, span{p * pageSize, min((p+1)*pageSize, common)})
		}
	}
	torn := len(spans)
	size := c.syncedSize
	switch visible := int64(len(c.data)); {
	case visible > size:
		// An append reaches the disk as a prefix of its pages.
		first := size / pageSize
		count := (visible+pageSize-1)/pageSize - first
		if keep := rng.Int64N(count + 1); keep > 0 {
			end := min(visible, (first+keep)*pageSize)
			spans = append(spans, span{size, end})
			size = end
			torn += int(keep)
		}
	case visible < size && rng.IntN(2) == 0:
		size = visible
	}
	if len(spans) == 0 && size == c.syncedSize {
		return 0
	}
	if err := writeSpans(path, c.data, spans, c.syncedSize, size); err != nil {
		t.backingErrorLocked("torn write to backing file", err)
		return 0
	}
	return torn
}

// span is the byte range [from, to) of a file.
type span struct{ from, to int64 }

// writeSpans writes the spans of data to the file at path, sets its size
// (from oldSize) and fsyncs it.
func writeSpans(path string, data []byte, spans []span, oldSize, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for _, s := range spans {
		if _, err := f.WriteAt(data[s.from:s.to], s.from); err != nil {
			f.Close()
			return err
		}
	}
	if size != oldSize {
		if err := f.Truncate(size); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pathHash is a stable hash of a path.
func pathHash(path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return h.Sum64()
}
