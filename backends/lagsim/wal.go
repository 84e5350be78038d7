package lagsim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"
)

// The primary's WAL is bounded: held snapshots keep a checkpoint from
// copying back the frames they read, and the WAL starts over only when no
// snapshot reads any of its frames (snapshot.go). Replicas that lag by
// turns never all let go at once, so without a bound the WAL grows for as
// long as the cluster is open: 20 MB a second of the lag sweep's traffic
// on this machine kind (docs/PERFORMANCE.md).
//
// Nor does SQLite checkpoint it: past its 1000 pages, every commit would
// try a checkpoint that the held snapshots leave with little to copy back
// — 16% of the CPU of a conformance run on the simulation (syncs
// included). The primary is opened without automatic checkpoints, and the
// cluster checkpoints passively at each look at the WAL instead, every
// walCheckEvery writes, copying back what no snapshot still reads.
const (
	// DefaultWALBound is the size of the primary's WAL past which the
	// cluster compacts it.
	DefaultWALBound = 256 << 20
	// walCheckEvery is how many writes go between two looks at its size.
	walCheckEvery = 64
	// compactBound bounds one compaction.
	compactBound = 15 * time.Second
)

// errHeldBack is a compaction skipped because a fault holds a replica to
// its snapshot.
var errHeldBack = errors.New("a replica is held to its snapshot by a fault")

// write runs one write to the primary, with writes held shared against a
// compaction, counts it, and then looks at the WAL every walCheckEvery
// writes.
func (c *Cluster) write(fn func() error) error {
	defer c.wrote()
	c.pause.RLock()
	defer c.pause.RUnlock()
	return fn()
}

// wrote counts one write that ended on the primary.
func (c *Cluster) wrote() {
	if c.writes.Add(1)%walCheckEvery == 0 {
		c.bound()
	}
}

// bound checkpoints the WAL passively and compacts it once it is past the
// cluster's bound, unless a compaction is under way already.
func (c *Cluster) bound() {
	fi, err := os.Stat(c.path + "-wal")
	if err != nil || !c.compacting.CompareAndSwap(false, true) {
		return
	}
	defer c.compacting.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), compactBound)
	defer cancel()
	if fi.Size() < c.walBound {
		c.checkpoint(ctx)
		return
	}
	if err := c.compact(ctx); err == nil {
		c.compactions.Add(1)
	}
}

// checkpoint copies back into the primary's file the frames of the WAL that
// no held snapshot reads, waiting for no one (PASSIVE): what SQLite's
// automatic checkpoint would have done. An error leaves the frames in the
// WAL, where readers still find them, and the next look tries again.
func (c *Cluster) checkpoint(ctx context.Context) {
	if _, err := c.primary.DB().ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err == nil {
		c.checkpoints.Add(1)
	}
}

// compact lets the WAL start over: with every write held off, each replica
// lets go of its snapshot, the WAL is checkpointed whole, and each replica
// takes the primary's current state, which is then in the database file
// alone, so the next write starts the WAL from its beginning. Every replica
// is refreshed at once — a replica may sync at any time — but never one a
// fault holds back (stalled, cut, or the primary stopped): then nothing is
// done, and the next look tries again.
func (c *Cluster) compact(ctx context.Context) error {
	c.pause.Lock()
	defer c.pause.Unlock()
	if c.down.Load() || c.opt.Mutant == MutantTornReplica || c.opt.Mutant == MutantShortSync {
		return errHeldBack
	}
	c.mu.Lock()
	members := make([]*member, 0, len(c.members))
	for _, m := range c.members {
		members = append(members, m)
	}
	c.mu.Unlock()
	var conns []*sql.Conn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	for _, m := range members {
		if m.cut.Load() || m.store.SyncsStalled() {
			return errHeldBack
		}
		conn, err := m.reader.DB().Conn(ctx)
		if err != nil {
			return fmt.Errorf("compact the WAL: a replica's connection: %w", err)
		}
		conns = append(conns, conn)
	}
	for _, conn := range conns {
		release(ctx, conn)
	}
	var errs []error
	if _, err := c.primary.DB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		errs = append(errs, fmt.Errorf("compact the WAL: checkpoint: %w", err))
	}
	for i, conn := range conns {
		errs = append(errs, members[i].reader.hold(ctx, conn))
	}
	return errors.Join(errs...)
}

// Checkpoints counts the passive checkpoints done.
func (c *Cluster) Checkpoints() int64 { return c.checkpoints.Load() }

// Compactions counts the compactions done.
func (c *Cluster) Compactions() int64 { return c.compactions.Load() }
