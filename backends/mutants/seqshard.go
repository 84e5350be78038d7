package mutants

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/storecheck/storecheck/backends/rqlite/guarded"
	"github.com/storecheck/storecheck/backends/sqlstore"
	"github.com/storecheck/storecheck/model"
)

// seqSharded numbers outbox and spawn entries from sequence shards, "so
// that concurrent commits do not contend for one counter" (a sequence
// cache without ORDER, as database clusters offer): each shard hands out
// the seqs of a block it reserved from the table's AUTOINCREMENT counter
// (sqlite_sequence). A commit numbers its entries from its execution's
// shard, which the execution leaves for a shard of its own only when it
// finds a commit of another execution holding it (shard). What it does
// keep:
//
//   - seqs are never reused: blocks are disjoint, reserved inside the
//     commit's transaction;
//   - one execution's entries ascend: a table (seq_shard_last) keeps, per
//     execution and queue, the highest seq its commits took, and a shard
//     whose next seq is not above it reserves a new block first;
//   - one client at a time only ever needs the first shard, so a
//     sequential history is numbered as AUTOINCREMENT numbers it.
type seqSharded struct {
	*base
	traceMax atomic.Int64
	rr       atomic.Uint64 // which shard a commit waits for when all are busy

	mu     sync.Mutex // guards shards and used
	shards []*seqShard
	used   map[string]*seqShard // execution id → the shard its last commit took
}

// seqShards caps the shards; seqShardBlock is how many seqs of a queue a
// shard reserves at a time.
const (
	seqShards     = 4
	seqShardBlock = 100
)

// seqShardTable is the mutant's own table: the highest seq of each queue
// each execution's commits took.
const seqShardTable = "CREATE TABLE IF NOT EXISTS seq_shard_last (execution_id TEXT NOT NULL, queue TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (execution_id, queue))"

// seqShard is one sequence shard: a lock its commit holds, and per queue
// the next seq of its block and the block's last (next > end: none left).
type seqShard struct {
	lock      chan struct{}
	holder    string // the execution whose commit holds it; guarded by seqSharded.mu
	next, end map[string]int64
}

func newSeqShard() *seqShard {
	return &seqShard{lock: make(chan struct{}, 1), next: map[string]int64{}, end: map[string]int64{}}
}

// seqShardStatements adds the mutant's table to the schema and to what a
// reset empties.
func seqShardStatements(st *sqlstore.Statements) {
	st.Schema = append(st.Schema, seqShardTable)
	st.Reset = append(st.Reset, "DELETE FROM seq_shard_last")
}

func wrapSeqSharded(_ context.Context, b *base, cfg model.Config) (model.Store, error) {
	s := &seqSharded{base: b, used: map[string]*seqShard{}}
	s.traceMax.Store(int64(cfg.TraceMax))
	return s, nil
}

// SetTraceMax implements model.TraceMaxSetter.
func (s *seqSharded) SetTraceMax(n int) {
	s.traceMax.Store(int64(n))
	s.base.SetTraceMax(n)
}

// Reset implements model.Resetter: the tables and their counters are
// emptied, and so are the shards, whose blocks the counters no longer
// reserve.
func (s *seqSharded) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shards, s.used = nil, map[string]*seqShard{}
	return s.base.Reset(ctx)
}

// Save implements model.Store: a commit with an empty batch.
func (s *seqSharded) Save(ctx context.Context, exe *model.Execution) error {
	return s.Commit(ctx, exe, model.Batch{})
}

// Commit implements model.Store: the compare-and-swap and the whole batch
// in one transaction, the outbox and spawn entries at their shard's seqs.
func (s *seqSharded) Commit(ctx context.Context, exe *model.Execution, b model.Batch) error {
	c, err := guarded.Prepare(exe, b, int(s.traceMax.Load()))
	if err != nil {
		return s.errorf("commit %q: %w", exe.ID, notApplied(err))
	}
	sh, err := s.shard(ctx, exe.ID)
	if err != nil {
		return s.errorf("commit %q: wait for a sequence shard: %w", exe.ID, notApplied(err))
	}
	defer s.release(sh)
	next, end := maps.Clone(sh.next), maps.Clone(sh.end)
	err = casInTx(ctx, s.DB(), c, func(conn *sql.Conn) error {
		return writeAtSeqs(ctx, conn, c, func(table string) (int64, error) { return sh.take(ctx, conn, table, c.ID) })
	})
	if err != nil {
		// Nothing was written: the seqs taken and the blocks reserved
		// went with the transaction.
		sh.next, sh.end = next, end
		var conflict *model.StoreConflict
		if errors.As(err, &conflict) {
			return conflict
		}
		return s.errorf("commit %q: %w", exe.ID, err)
	}
	exe.Version = c.New()
	return nil
}

// shard returns a shard for a commit of execution id, locked (release
// unlocks it). An execution keeps the shard it was given while no commit
// of another execution holds it; when one does, it moves to a free shard
// no other execution keeps, or to a new one while there are fewer than
// seqShards. An execution's first commit takes the first free shard, or a
// new one. When nothing else is free, the commit waits for its shard, or
// for the next in turn.
func (s *seqSharded) shard(ctx context.Context, id string) (*seqShard, error) {
	s.mu.Lock()
	wait, ok := s.used[id]
	switch {
	case ok && s.tryTake(wait, id):
		s.mu.Unlock()
		return wait, nil
	case ok && wait.holder == id:
		// Its own commit holds it: wait for it.
	default:
		if sh := s.another(id, ok); sh != nil {
			s.mu.Unlock()
			return sh, nil
		}
		if !ok {
			wait = s.shards[s.rr.Add(1)%uint64(len(s.shards))]
		}
	}
	s.used[id] = wait
	s.mu.Unlock()
	select {
	case wait.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	wait.holder = id
	s.mu.Unlock()
	return wait, nil
}

// another finds id a shard other than the one it keeps, with s.mu held: a
// free one (when moved, one no other execution keeps), or a new one while
// there are fewer than seqShards; nil when there is none.
func (s *seqSharded) another(id string, moved bool) *seqShard {
	kept := map[*seqShard]bool{}
	if moved {
		for other, sh := range s.used {
			if other != id {
				kept[sh] = true
			}
		}
	}
	for _, sh := range s.shards {
		if !kept[sh] && s.tryTake(sh, id) {
			s.used[id] = sh
			return sh
		}
	}
	if len(s.shards) < seqShards {
		sh := newSeqShard()
		s.shards = append(s.shards, sh)
		s.tryTake(sh, id)
		s.used[id] = sh
		return sh
	}
	return nil
}

// tryTake locks sh for a commit of id if it is free, with s.mu held.
func (s *seqSharded) tryTake(sh *seqShard, id string) bool {
	select {
	case sh.lock <- struct{}{}:
		sh.holder = id
		return true
	default:
		return false
	}
}

// release unlocks a shard a commit took.
func (s *seqSharded) release(sh *seqShard) {
	s.mu.Lock()
	sh.holder = ""
	s.mu.Unlock()
	<-sh.lock
}

// take returns the shard's next seq of queue table for execution id, inside
// the commit's transaction: above every seq the execution took before
// (reserving a new block when the shard's is used up or lies below), and
// records it as the execution's highest.
func (sh *seqShard) take(ctx context.Context, conn *sql.Conn, table, id string) (int64, error) {
	var last int64
	err := conn.QueryRowContext(ctx, "SELECT seq FROM seq_shard_last WHERE execution_id = ? AND queue = ?", id, table).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read the execution's last %s seq: %w", table, err)
	}
	// BUG: the execution's own seqs ascend, but the shard's block may lie
	// below another shard's: an entry of a commit that returned earlier,
	// numbered by a shard with a higher block, is listed after this one.
	if next := sh.next[table]; next == 0 || next > sh.end[table] || next <= last {
		if err := sh.reserve(ctx, conn, table); err != nil {
			return 0, err
		}
	}
	seq := sh.next[table]
	sh.next[table]++
	if _, err := conn.ExecContext(ctx, "INSERT INTO seq_shard_last (execution_id, queue, seq) VALUES (?, ?, ?) "+
		"ON CONFLICT (execution_id, queue) DO UPDATE SET seq = excluded.seq", id, table, seq); err != nil {
		return 0, fmt.Errorf("record the execution's last %s seq: %w", table, err)
	}
	return seq, nil
}

// reserve gives the shard the next block of table's seqs, above every seq
// reserved so far, by moving the table's AUTOINCREMENT counter past it.
func (sh *seqShard) reserve(ctx context.Context, conn *sql.Conn, table string) error {
	var hi int64
	err := conn.QueryRowContext(ctx, "SELECT seq FROM sqlite_sequence WHERE name = ?", table).Scan(&hi)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = conn.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", table, hi+seqShardBlock)
	case err == nil:
		_, err = conn.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = ? WHERE name = ?", hi+seqShardBlock, table)
	}
	if err != nil {
		return fmt.Errorf("reserve a block of %s seqs: %w", table, err)
	}
	sh.next[table], sh.end[table] = hi+1, hi+seqShardBlock
	return nil
}

// nullable turns a nil target into SQL NULL.
func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
