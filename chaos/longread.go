package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storecheck/storecheck/internal/wait"
)

// LongReadCluster is a Cluster whose nodes can be sent a long read: one
// read-only query, at the node's own level (no leader involved), that keeps
// a read transaction open on the node's database for as long as it runs.
type LongReadCluster interface {
	Cluster
	// LongRead runs one such read on node id, counting rows rows, and
	// returns how long it took.
	LongRead(ctx context.Context, id string, rows int) (time.Duration, error)
}

// LongReads keeps a read open on the leader's database for the fault's
// whole window: one long read after another (an analytics query, a
// report), each holding a read transaction while it runs, as a large
// table's scan does. Nothing is broken; what it tests is everything the
// server must do while a reader holds the database: checkpoint its log
// into the database file, take its snapshots, keep applying writes and
// serving the other reads. A server that cannot truncate its log under a
// reader must wait or give up on that snapshot, never stop serving
// (rqlite#2537: 9.3.9–9.4.2 deadlocked, the snapshot waiting for every
// reader while a strong read waited for the snapshot). The first read runs
// within the injection, so that its duration is measured; the heal ends
// the one in flight.
type LongReads struct {
	// Rows is how many rows each read counts: its length.
	Rows int
	// Hold, when set (NewLongReads), is how long a read should hold the
	// database: a read that took less makes the reads after it count
	// twice the rows, up to maxLongReadRows, so that on a machine that
	// counts rows faster than the one Rows was chosen on the reads still
	// hold the database that long. The count reached carries over from
	// one window to the next.
	Hold  time.Duration
	grown *atomic.Int64 // the rows the reads count now; nil: Rows
}

// NewLongReads is LongReads of rows rows at first, grown until a read
// holds the database for hold.
func NewLongReads(rows int, hold time.Duration) LongReads {
	g := new(atomic.Int64)
	g.Store(int64(rows))
	return LongReads{Rows: rows, Hold: hold, grown: g}
}

// maxLongReadRows bounds the growth of a read's rows (64 times the 1,000,000
// long-reads starts from): a read that is still short at it is left so.
const maxLongReadRows = 64_000_000

// rows is how many rows the next read counts.
func (f LongReads) rows() int {
	if f.grown == nil {
		return f.Rows
	}
	return int(f.grown.Load())
}

func (LongReads) Name() string { return "long-reads" }

func (f LongReads) availableOn(c Cluster) error {
	if f.Rows <= 0 {
		return fmt.Errorf("a long read of %d rows: want at least one", f.Rows)
	}
	if _, ok := c.(LongReadCluster); !ok {
		return errors.New("needs a cluster whose nodes can be sent a long read")
	}
	return nil
}

// longReadTimeout bounds one long read: a node that does not answer in it
// is read again (or the window ends). maxLongReads bounds the reads of one
// window after its first: the heal ends them, and a node that answers at
// once (a short read, an error) must not be read without end meanwhile.
const (
	longReadTimeout = 30 * time.Second
	maxLongReads    = 10_000
)

func (f LongReads) injectOn(ctx context.Context, c Cluster, _ *rand.Rand) (Injection, error) {
	lc := c.(LongReadCluster)
	leader, err := c.Leader(ctx)
	if err != nil {
		return Injection{}, err
	}
	rows := f.rows()
	first, err := f.read(ctx, lc, leader)
	inj := Injection{Target: leader,
		Detail:  fmt.Sprintf("long reads of %d rows at level none on leader %s, one after another", rows, leader),
		Metrics: map[string]float64{"long_read_ms": float64(first.Microseconds()) / 1000, "long_read_rows": float64(rows)}}
	if err != nil {
		return inj, fmt.Errorf("first long read on %s: %w", leader, err)
	}
	// The reads go on after the injection's context has ended, until the
	// heal.
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var done sync.WaitGroup
	done.Add(1)
	go func() {
		defer done.Done()
		for n := 0; n < maxLongReads && rctx.Err() == nil; n++ {
			if _, err := f.read(rctx, lc, leader); err != nil && rctx.Err() == nil {
				// A node that failed a read (a restart, a timeout) is read
				// again; the window and maxLongReads bound the loop.
				wait.Sleep(rctx, 50*time.Millisecond)
			}
		}
	}()
	inj.Heal = func(context.Context) error {
		stop()
		done.Wait()
		return nil
	}
	return inj, nil
}

// read sends node id one long read, and grows the reads after it when it
// answered sooner than Hold.
func (f LongReads) read(ctx context.Context, lc LongReadCluster, id string) (time.Duration, error) {
	rctx, cancel := context.WithTimeout(ctx, longReadTimeout)
	defer cancel()
	rows := f.rows()
	took, err := lc.LongRead(rctx, id, rows)
	if err == nil && f.grown != nil && took < f.Hold && rows < maxLongReadRows {
		f.grown.CompareAndSwap(int64(rows), int64(min(2*rows, maxLongReadRows)))
	}
	return took, err
}

func (f LongReads) Available(on any) error { return onCluster{f}.Available(on) }
func (f LongReads) Inject(ctx context.Context, on any, rng *rand.Rand) (Injection, error) {
	return onCluster{f}.Inject(ctx, on, rng)
}
