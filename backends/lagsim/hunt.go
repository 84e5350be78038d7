package lagsim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/storecheck/storecheck/model"
)

// The third blind hunt's mutants (docs/DETECTION.md, "A third blind hunt:
// replica reads"): replicas that break one clause of what a replica read
// may return (docs/CONTRACT.md, property 10), each invented from the
// contract before the checks were read. They share one replica of two
// snapshots, a and b (each a replica connection, snapshot.go); what each
// does with them is its kind's.
const (
	// MutantRewindOnReconnect: the first sync that succeeds after one that
	// could not reach the primary (a cut link, a killed primary) serves the
	// replica's last local checkpoint, older than what it served before.
	MutantRewindOnReconnect = "rewind-on-reconnect"
	// MutantFlipFlop: reads alternate between the newest snapshot and the
	// one before it (two copies behind one name).
	MutantFlipFlop = "flip-flop"
	// MutantLagBeyondBound: the replica syncs every ten times its declared
	// interval (every 100 ms where it should sync before every read).
	MutantLagBeyondBound = "lag-beyond-bound"
	// MutantRYWCommitsOnly: the read-your-writes sync follows the client's
	// commits but not its acks, delete_timer or append_trace.
	MutantRYWCommitsOnly = "ryw-commits-only"
	// MutantRYWEarly: the sync after a write of the client serves the
	// primary's state from before the write began.
	MutantRYWEarly = "ryw-early"
	// MutantLostFrames: the outbox inserts whose seq is 3 mod 7 never
	// reach the replica.
	MutantLostFrames = "lost-frames"
	// MutantReorderEmits: the replica applies a commit's emits in reverse
	// order: of two adjacent seqs of one commit, each holds the other's
	// event.
	MutantReorderEmits = "reorder-emits"
	// MutantShardedApply: the replica applies each execution's changes in
	// a shard of its own (by the id's last byte), the two shards synced by
	// turns: every execution reads consistent and monotonic, the whole
	// not a prefix of the commits.
	MutantShardedApply = "sharded-apply"
	// MutantKeepsDeleted: the replica's listings of the outbox and the
	// spawns merge every entry they listed before, forgotten only when
	// the client itself acknowledged it.
	MutantKeepsDeleted = "keeps-deleted"
	// MutantMixedSource: is_processed is answered by the primary, every
	// other read by the replica.
	MutantMixedSource = "mixed-source"
	// MutantMidTxnStop: a sync of other clients' commits stops before the
	// last outbox insert of the newest commit, when that commit has more
	// than one.
	MutantMidTxnStop = "mid-txn-stop"
	// MutantPositionAhead is short-sync whose position is the one its
	// sync saw at the primary, not the state it serves.
	MutantPositionAhead = "position-ahead"
)

// huntMutants are the hunt's mutants built on huntReplica.
var huntMutants = []string{
	MutantRewindOnReconnect, MutantFlipFlop, MutantLagBeyondBound, MutantRYWCommitsOnly,
	MutantRYWEarly, MutantLostFrames, MutantReorderEmits, MutantShardedApply,
	MutantKeepsDeleted, MutantMixedSource, MutantMidTxnStop,
}

// errPartial is a mutant's sync that moved the replica somewhere other than
// the state the cluster's write count says it reached: the syncer does not
// skip the next one as having nothing new to see.
var errPartial = errors.New("partial sync")

// huntReplica is the replica of the hunt's mutants.
type huntReplica struct {
	readOnly // every write goes to the primary
	kind     string
	mu       sync.RWMutex // reads share it, a sync holds it alone
	a, b     *snapshot
	own      atomic.Bool // a write of the client succeeded since the last sync
	failed   atomic.Bool // the link refused a sync or write since the last sync
	skip     atomic.Bool // ryw-commits-only: the next sync follows an ack
	whole    atomic.Bool // mid-txn-stop: the last sync followed an own write
	syncs    int         // under mu
	reads    atomic.Uint64
	primary  model.Store // mixed-source
	gate     func() error

	cache    sync.Mutex // keeps-deleted
	outbox   map[int64]model.OutboxEntry
	spawns   map[int64]model.SpawnEntry
	ownAcked map[int64]bool // outbox
	ownSpawn map[int64]bool
}

var _ model.Store = (*huntReplica)(nil)

func openHunt(ctx context.Context, path string, cfg model.Config, name, kind string) (*huntReplica, error) {
	a, err := openReplica(ctx, path, cfg, name+" a")
	if err != nil {
		return nil, err
	}
	b, err := openReplica(ctx, path, cfg, name+" b")
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return &huntReplica{kind: kind, a: a, b: b,
		outbox: map[int64]model.OutboxEntry{}, spawns: map[int64]model.SpawnEntry{},
		ownAcked: map[int64]bool{}, ownSpawn: map[int64]bool{}}, nil
}

func (h *huntReplica) wrote()       { h.own.Store(true) }
func (h *huntReplica) unreachable() { h.failed.Store(true) }

// beforeWrite runs before a write of the client reaches the primary.
func (h *huntReplica) beforeWrite() {
	if h.kind != MutantRYWEarly {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// BUG (ryw-early): the state the write's read-your-writes sync will
	// serve is taken before the write.
	_ = h.b.refresh(context.Background())
}

// refresh is the replica's sync.
func (h *huntReplica) refresh(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	both := func() error { return errors.Join(h.a.refresh(ctx), h.b.refresh(ctx)) }
	switch h.kind {
	case MutantRewindOnReconnect:
		if h.own.Swap(false) {
			h.syncs = 0
			return both()
		}
		if h.failed.Swap(false) {
			// BUG: back on the link, the replica resumes from its last
			// local checkpoint, older than what it served.
			h.a, h.b = h.b, h.a
			return errPartial
		}
		h.syncs++
		if h.syncs%8 == 0 {
			return both()
		}
		return h.a.refresh(ctx)
	case MutantFlipFlop:
		if h.own.Swap(false) {
			return both()
		}
		// b keeps the state a served; a takes the primary's.
		h.a, h.b = h.b, h.a
		if err := h.a.refresh(ctx); err != nil {
			return err
		}
		return errPartial
	case MutantRYWCommitsOnly:
		if h.skip.Swap(false) {
			// BUG: the sync after an ack (delete_timer, append_trace) is
			// reported done and does nothing.
			return errPartial
		}
		return h.a.refresh(ctx)
	case MutantRYWEarly:
		if h.own.Swap(false) {
			// BUG: served: the state from before the client's write.
			h.a, h.b = h.b, h.a
			return errPartial
		}
		return h.a.refresh(ctx)
	case MutantShardedApply:
		if h.own.Swap(false) {
			return both()
		}
		// BUG: one shard per sync.
		h.syncs++
		s := h.a
		if h.syncs%2 == 1 {
			s = h.b
		}
		if err := s.refresh(ctx); err != nil {
			return err
		}
		return errPartial
	case MutantMidTxnStop:
		h.whole.Store(h.own.Swap(false))
		return h.a.refresh(ctx)
	}
	return h.a.refresh(ctx)
}

// position and dump are the served snapshot's; of two that may differ
// (flip-flop, sharded-apply), the older's.
func (h *huntReplica) position() int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.kind == MutantFlipFlop || h.kind == MutantShardedApply {
		return min(h.a.position(), h.b.position())
	}
	return h.a.position()
}

func (h *huntReplica) dump(ctx context.Context) (*model.Dump, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.a
	if (h.kind == MutantFlipFlop || h.kind == MutantShardedApply) && h.b.position() < h.a.position() {
		s = h.b
	}
	d, err := s.dump(ctx)
	if err != nil {
		return nil, err
	}
	switch h.kind {
	case MutantLostFrames:
		d.Outbox = slices.DeleteFunc(d.Outbox, func(r model.OutboxRow) bool { return lost(r.Seq) })
	}
	return d, nil
}

// lost says whether lost-frames never applies the outbox insert of seq.
func lost(seq int64) bool { return seq%7 == 3 }

// pick is the snapshot a read about execution id is served from.
func (h *huntReplica) pick(id string) *snapshot {
	switch h.kind {
	case MutantFlipFlop:
		if h.reads.Add(1)%2 == 0 {
			return h.b // BUG: every other read, the state before
		}
	case MutantShardedApply:
		if id != "" && id[len(id)-1]%2 == 1 {
			return h.b
		}
	}
	return h.a
}

func huntRead[T any](h *huntReplica, id string, fn func(s *snapshot) (T, error)) (T, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return fn(h.pick(id))
}

func (h *huntReplica) Load(ctx context.Context, id string) (*model.Execution, error) {
	return huntRead(h, id, func(s *snapshot) (*model.Execution, error) { return s.Load(ctx, id) })
}

func (h *huntReplica) LoadForEvent(ctx context.Context, id, eventID string) (*model.Execution, bool, error) {
	type answer struct {
		exe  *model.Execution
		done bool
	}
	a, err := huntRead(h, id, func(s *snapshot) (answer, error) {
		exe, done, err := s.LoadForEvent(ctx, id, eventID)
		return answer{exe, done}, err
	})
	return a.exe, a.done, err
}

func (h *huntReplica) ListExecutions(ctx context.Context, f model.ListFilter) (model.Page, error) {
	return huntRead(h, "", func(s *snapshot) (model.Page, error) { return s.ListExecutions(ctx, f) })
}

func (h *huntReplica) IsProcessed(ctx context.Context, id, eventID string) (bool, error) {
	if h.kind == MutantMixedSource && h.gate() == nil {
		// BUG: the marker is read on the primary, fresher than the
		// replica every other read is served from.
		return h.primary.IsProcessed(ctx, id, eventID)
	}
	return huntRead(h, id, func(s *snapshot) (bool, error) { return s.IsProcessed(ctx, id, eventID) })
}

func (h *huntReplica) PendingOutbox(ctx context.Context) ([]model.OutboxEntry, error) {
	out, err := huntRead(h, "", func(s *snapshot) ([]model.OutboxEntry, error) { return s.PendingOutbox(ctx) })
	if err != nil {
		return nil, err
	}
	switch h.kind {
	case MutantLostFrames:
		out = slices.DeleteFunc(out, func(e model.OutboxEntry) bool { return lost(e.Seq) })
	case MutantReorderEmits:
		for i := 0; i+1 < len(out); i++ {
			if out[i+1].Seq == out[i].Seq+1 && sameCommit(out[i].Event.ID, out[i+1].Event.ID) {
				out[i].Event, out[i+1].Event = out[i+1].Event, out[i].Event
				out[i].TargetID, out[i+1].TargetID = out[i+1].TargetID, out[i].TargetID
				i++
			}
		}
	case MutantMidTxnStop:
		if n := len(out); !h.whole.Load() && n >= 2 && sameCommit(out[n-2].Event.ID, out[n-1].Event.ID) {
			out = out[:n-1] // BUG: the sync stopped before the commit's last insert
		}
	case MutantKeepsDeleted:
		h.cache.Lock()
		defer h.cache.Unlock()
		out = kept(h.outbox, h.ownAcked, out, func(e model.OutboxEntry) int64 { return e.Seq })
	}
	return out, nil
}

// kept is keeps-deleted's listing: what the replica lists now, merged into
// every entry listed before (seen), less what its own client acknowledged,
// by seq.
func kept[T any](seen map[int64]T, own map[int64]bool, now []T, seq func(T) int64) []T {
	for _, e := range now {
		seen[seq(e)] = e
	}
	var out []T
	for s, e := range seen {
		if !own[s] {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(x, y T) int { return cmp.Compare(seq(x), seq(y)) })
	return out
}

// sameCommit says whether two event ids are emits of one commit (the
// workload's ids are "TOKEN/eK").
func sameCommit(x, y string) bool {
	tx, _, okx := strings.Cut(x, "/e")
	ty, _, oky := strings.Cut(y, "/e")
	return okx && oky && tx == ty
}

func (h *huntReplica) PendingSpawns(ctx context.Context) ([]model.SpawnEntry, error) {
	if h.kind == MutantShardedApply {
		h.mu.RLock()
		defer h.mu.RUnlock()
		var out []model.SpawnEntry
		for _, s := range []*snapshot{h.a, h.b} {
			got, err := s.PendingSpawns(ctx)
			if err != nil {
				return nil, err
			}
			for _, e := range got {
				if h.pick(e.ParentID) == s {
					out = append(out, e)
				}
			}
		}
		slices.SortFunc(out, func(x, y model.SpawnEntry) int { return int(x.Seq - y.Seq) })
		return out, nil
	}
	out, err := huntRead(h, "", func(s *snapshot) ([]model.SpawnEntry, error) { return s.PendingSpawns(ctx) })
	if err != nil || h.kind != MutantKeepsDeleted {
		return out, err
	}
	h.cache.Lock()
	defer h.cache.Unlock()
	return kept(h.spawns, h.ownSpawn, out, func(e model.SpawnEntry) int64 { return e.Seq }), nil
}

func (h *huntReplica) DueTimers(ctx context.Context, now float64) ([]model.DueTimer, error) {
	if h.kind == MutantShardedApply {
		h.mu.RLock()
		defer h.mu.RUnlock()
		var out []model.DueTimer
		for _, s := range []*snapshot{h.a, h.b} {
			got, err := s.DueTimers(ctx, now)
			if err != nil {
				return nil, err
			}
			for _, t := range got {
				if h.pick(t.ExecutionID) == s {
					out = append(out, t)
				}
			}
		}
		slices.SortStableFunc(out, func(x, y model.DueTimer) int {
			switch {
			case x.FireAt < y.FireAt:
				return -1
			case x.FireAt > y.FireAt:
				return 1
			}
			return 0
		})
		return out, nil
	}
	return huntRead(h, "", func(s *snapshot) ([]model.DueTimer, error) { return s.DueTimers(ctx, now) })
}

func (h *huntReplica) ReadTrace(ctx context.Context, id string) ([]model.TraceEntry, error) {
	return huntRead(h, id, func(s *snapshot) ([]model.TraceEntry, error) { return s.ReadTrace(ctx, id) })
}

// Close closes both snapshots' connections.
func (h *huntReplica) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return errors.Join(h.a.Close(), h.b.Close())
}

// huntLink is a hunt replica's link to the primary: the writes that are
// not commits tell the replica of themselves.
type huntLink struct {
	*link
	h *huntReplica
}

func (l huntLink) acked(err error, outbox bool, seq int64) error {
	if err != nil {
		return err
	}
	switch l.h.kind {
	case MutantRYWCommitsOnly:
		l.h.skip.Store(true)
	case MutantKeepsDeleted:
		l.h.cache.Lock()
		if outbox {
			l.h.ownAcked[seq] = true
		} else if seq >= 0 {
			l.h.ownSpawn[seq] = true
		}
		l.h.cache.Unlock()
	}
	return nil
}

func (l huntLink) AckOutbox(ctx context.Context, seq int64) error {
	return l.acked(l.link.AckOutbox(ctx, seq), true, seq)
}

func (l huntLink) AckSpawn(ctx context.Context, seq int64) error {
	return l.acked(l.link.AckSpawn(ctx, seq), false, seq)
}

func (l huntLink) DeleteTimer(ctx context.Context, id, path string, fireAt float64) error {
	return l.acked(l.link.DeleteTimer(ctx, id, path, fireAt), false, -1)
}

func (l huntLink) AppendTrace(ctx context.Context, id string, entry json.RawMessage) error {
	return l.acked(l.link.AppendTrace(ctx, id, entry), false, -1)
}
